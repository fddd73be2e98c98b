"""Homa's headline in simulation (Montazeri et al., SIGCOMM'18, section 5.2, Figure 12): tail
slowdown by message size at 80% load on the Homa simulator's fabric, against the exact ideal
(an empty network: what pFabric-like SRPT approaches). One workload: W4 (Facebook Hadoop, the SIRD
paper's WKb), with the simulator's settings for it.

The set-up is the Homa simulator's (PlatformLab/HomaSimulation, homaTransportConfig.ini): 144 hosts
in 9 racks of 16 under 4 aggregation switches, 10 Gb/s host links, 40 Gb/s fabric links, no link
delay, 0.25 us per switch, store-and-forward; RTTbytes 10,000 B; 8 priority levels split by the
unscheduled share of W4's bytes (Homa section 3.4: 1 unscheduled, 7 scheduled, the simulator's
adaptiveSchedPrioLevels for W4) and overcommitment 7; discrete ("step") sampling of the
size distribution; Poisson arrivals to uniformly random receivers; per-packet spraying. Host
software delays (0.5 us turnaround, NIC think time) are not modelled, so our ideal is that much
shorter; the RESEND timeout is far above any queueing delay (the simulator has no loss).

The paper's numbers: Figure 12 plots Homa's 99th-percentile slowdown against message size at 80%
load; its values could not be transcribed here (no data files are published with the simulator).
The checks hold what the paper states in words: Homa's tail latency is close to the hardware's for
short messages ("roughly equal to pFabric", section 5.2 and the abstract), so the ideal (slowdown
1) is the reference with a tolerance for the p99 at 80% load, and it sustains the load.
"""

from ..setups import SIRD_PAPER_NET
from ..sweep.spec import SweepSpec
from .base import SLOWDOWN, Repro, ours
from .common import table

WORKLOAD = "fb_hadoop_w4"
RTT_BYTES = 10_000
OVERCOMMITMENT = 7  # the simulator's value for W4 (and W5)
LOAD = 0.8
# Size groups: one packet, RTTbytes (all unscheduled), 100 KB, 1 MB.
EDGES = [SIRD_PAPER_NET["mtu_bytes"] - SIRD_PAPER_NET["header_bytes"], RTT_BYTES, 100_000, 1_000_000]
# (duration, warm-up) in us; arrivals stop 5 ms before the end so the counted messages finish.
QUICK = (60_000.0, 15_000.0)
FULL = (400_000.0, 50_000.0)
DRAIN_US = 5_000.0


def spec(quick: bool, seed: int = 1) -> dict:
    dur, warm = QUICK if quick else FULL
    return {
        "name": f"homa-paper-w4-{int(LOAD * 100)}",
        "seed": seed,
        "duration_us": dur,
        "measure": {"warmup_us": warm},
        "topology": {"kind": "leaf_spine", "racks": 9, "hosts_per_rack": 16, "spines": 4, "host_rate_gbps": 10.0,
                     "core_rate_gbps": 40.0, "host_delay_us": 0.0, "core_delay_us": 0.0},
        "net": {**SIRD_PAPER_NET, "switch_latency_us": 0.25},
        "queue": {"priorities": 8},
        "routing": {"load_balancing": "spray"},
        "transport": {"protocol": "homa", "rtt_bytes": RTT_BYTES, "priority_levels": 8,
                      "overcommitment": OVERCOMMITMENT, "timeout_us": 10_000.0},
        "workload": [{"kind": "poisson", "load": LOAD, "cdf": WORKLOAD, "interpolation": "step",
                      "stop_us": dur - DRAIN_US}],
        "metrics": {"size_group_edges_bytes": EDGES},
    }


def build(quick: bool) -> SweepSpec:
    return SweepSpec(base=spec(quick), axes={"seed": [1]}, name="homa-paper")


def _row(df):
    done = df[df["status"] == "done"]
    if done.empty:
        raise ValueError("no finished run")
    return done.iloc[0]


def _groups(r):
    out = []
    for g in "ABCDE":
        if f"size_group_{g}" in r and isinstance(r[f"size_group_{g}"], str):
            out.append((g, r[f"size_group_{g}"], r[f"slowdown_{g}_median"], r[f"slowdown_{g}_p99"]))
    return out


# The paper's Fig. 12 could not be transcribed: the bands are ours, for its words "close to the
# hardware's" (slowdown 1 is the hardware's, an empty network's).
NEAR_IDEAL = "ours: 'roughly equal to pFabric', near the ideal (no number read): a p99 at most 3.5x the ideal"


def _sustained(df, out):
    return _row(df)["goodput_gbps"] / _row(df)["offered_window_gbps"]


CHECKS = [
    ours("p99 slowdown of one-packet messages at 80% load (paper: near the ideal, Fig. 12)", 1.0, 3.5,
         lambda df, out: _row(df)["slowdown_A_p99"], reason=NEAR_IDEAL, physical=SLOWDOWN),
    ours("p99 slowdown of messages up to RTTbytes (unscheduled) at 80% load", 1.0, 3.5,
         lambda df, out: _row(df)["slowdown_B_p99"], reason=NEAR_IDEAL, physical=SLOWDOWN),
    ours("median slowdown of all messages at 80% load", 1.0, 1.75, lambda df, out: _row(df)["slowdown_median"],
         reason="ours: half the messages within 1.75x the ideal, for the same words", physical=SLOWDOWN),
    ours("delivered / offered in the measurement window (Homa sustains 80% load)", 0.9, 1.1, _sustained,
         quick_band=(0.8, 1.2), reason="ours: Homa sustains the load",
         quick_reason="the quick window is shorter, its arrivals burstier"),
]


def report(df, out: str) -> str:
    r = _row(df)
    rows = [(label, f"{med:.2f}", f"{p99:.2f}") for _, label, med, p99 in _groups(r)]
    rows.append(("all", f"{r['slowdown_median']:.2f}", f"{r['slowdown_p99']:.2f}"))
    head = (f"Homa, W4 (Facebook Hadoop) at {int(LOAD * 100)}% load, 144 hosts at 10 Gb/s, RTTbytes {RTT_BYTES} B, "
            f"k = {OVERCOMMITMENT}: slowdown against the exact ideal by message size\n"
            f"goodput {r['goodput_gbps']:.1f} Gb/s of {r['offered_window_gbps']:.1f} offered in the window; "
            f"{int(r['flows_finished'])} of {int(r['flows_started'])} messages finished\n")
    return head + table(rows, ["size", "median slowdown", "p99 slowdown"])


REPRO = Repro("homa-paper", "Homa: tail slowdown by message size at 80% load (W4)", "Homa SIGCOMM'18 s5.2 Fig. 12",
              build, report, CHECKS)
