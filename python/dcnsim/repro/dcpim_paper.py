"""dcPIM paper (Cai et al., SIGCOMM'22) headline, Figure 3: near-optimal tail latency for short flows
at 0.6 load on the paper's leaf-spine: 144 hosts in 9 racks of 16, 4 spines, 100 Gb/s hosts,
400 Gb/s core, 0.65 us links, 500 KB port buffers, all-to-all Poisson arrivals. Flows of less than
1 BDP (49 packets of 1460 B at 100 Gb/s) see a p99 slowdown of ~1.09 on IMC10 (1.16 web search,
1.09 data mining), the mean slowdown of all flows is 1.52 (1.97, 1.28), and the network delivers
99.7% of the offered load.

The paper's numbers are the authors' plotted data (Terabit-Ethernet/dcPIM,
simulator/py/analysis/gnuplot/data/all-to-all_*_100_slowdown_size.dat: mean and p99 - mean per size
group at 0.6 load; all-to-all_slowdown.dat; aditya_load_util.dat). Their ideal FCT (the "oracle")
is payload / line rate plus one packet's store-and-forward and the propagation delay; ours is the
exact ideal with every packet's headers, a little larger, so our slowdowns are a little smaller for
the same completion times. Web search is the DCTCP distribution in bytes (HPCC's file), the paper's is
in packets. Delivered/offered is checked on IMC10 only: web search's flows reach 30 MB and data
mining's 1 GB, and our 20 ms runs end with the largest flows still in progress (web search: 271 flows
of 15 MB on average, 2.8 GB missing; data mining 14 GB), which the paper's far longer runs amortize;
web search delivers 0.913 and data mining 0.383 of what arrives in the window. The setup
("dcpim-paper") keeps the simulator's BDP of 49 packets (ours, from the exact base RTT, is 46: flows
of 47-49 packets would wait for a matching, and web search has many) and its six size classes.
Full run (3 workloads, 20 ms, 2 workers): about 7 minutes. The quick variant runs IMC10 only, for
10 ms (2 ms of warm-up), in about 35 s."""

from typing import Callable

from ..sweep.spec import SweepSpec
from .base import SLOWDOWN, Measure, Repro, at_most, paper_value, paper_value_or_at_most
from .common import table

# The paper's BDP: ceil(5.8 us x 100 Gb/s / 1500 B) = 49 packets of 1460 B payload.
PAPER_BDP_BYTES = 49 * 1460
LOAD = 0.6
WORKLOADS = ["imc10", "websearch", "datamining"]
# (p99 slowdown of flows < 1 BDP, mean and p99 slowdown of all flows, utilization) at 0.6 load.
PAPER = {"imc10": (1.086, 1.52, 7.11, 0.997), "websearch": (1.156, 1.97, 8.18, 0.998),
         "datamining": (1.090, 1.28, 5.02, 0.973)}
DURATIONS = {"quick": (10000.0, 2000.0), "full": (20000.0, 4000.0)}


def fabric() -> dict:
    return {"kind": "leaf_spine", "racks": 9, "hosts_per_rack": 16, "spines": 4, "host_rate_gbps": 100.0,
            "core_rate_gbps": 400.0, "host_delay_us": 0.65, "core_delay_us": 0.65}


def build(quick: bool) -> SweepSpec:
    dur, warm = DURATIONS["quick" if quick else "full"]
    base = {
        "seed": 1, "duration_us": dur, "measure": {"warmup_us": warm},
        "setup": "dcpim-paper",
        "topology": fabric(),
        "workload": [{"name": "all-to-all", "kind": "poisson", "load": LOAD, "cdf": "imc10"}],
        "metrics": {"size_group_edges_bytes": [PAPER_BDP_BYTES]},
    }
    cdfs = WORKLOADS[:1] if quick else WORKLOADS
    return SweepSpec(base=base, axes={"workload[0].cdf": cdfs}, name="dcpim-paper")


def _row(df, cdf: str):
    d = df[df["status"] == "done"]
    rows = d[d["workload[0].cdf"] == cdf]
    if not len(rows):
        raise LookupError(f"no finished run of {cdf}")
    return rows.iloc[0]


def _short_p99(df, out, cdf):
    return float(_row(df, cdf)["slowdown_A_p99"])


def _mean(df, out, cdf):
    return float(_row(df, cdf)["slowdown_mean"])


def _p99(df, out, cdf):
    return float(_row(df, cdf)["slowdown_p99"])


def _delivered(df, out, cdf):
    r = _row(df, cdf)
    return float(r["goodput_gbps"] / r["offered_window_gbps"])


def _of(measure: Callable[[object, str, str], float], cdf: str) -> Measure:
    """`measure` of the runs of workload `cdf`."""
    return lambda df, out: measure(df, out, cdf)


FIG3 = "the paper's Fig. 3 values; a tail moves with the run's length and seed"


def _checks():
    checks = []
    for cdf in WORKLOADS:
        short, mean, p99, util = PAPER[cdf]
        full_only = cdf != "imc10"
        checks += [
            # Near-optimal: the paper's ~1.1 at the tail; a slowdown is never below 1, so one-sided.
            at_most(f"p99 slowdown of flows < 1 BDP, {cdf} @0.6", short, _of(_short_p99, cdf),
                    slack=0.25, full_only=full_only, physical=SLOWDOWN,
                    claim="near-optimal short flows (Fig. 3); ours within 0.25 of the paper's p99"),
            paper_value_or_at_most(f"mean slowdown of all flows, {cdf} @0.6", mean, 0.3,
                                   _of(_mean, cdf), relative=True, full_only=full_only,
                                   physical=SLOWDOWN, reason=FIG3),
            paper_value(f"p99 slowdown of all flows, {cdf} @0.6", p99, 0.4, _of(_p99, cdf),
                        relative=True, full_only=full_only, physical=SLOWDOWN, reason=FIG3),
        ]
        if cdf == "imc10":  # web search and data mining: see the module's docstring
            checks.append(paper_value(f"delivered / offered, {cdf} @0.6", util, 0.05,
                                      _of(_delivered, cdf), full_only=full_only,
                                      reason="a goodput over a window of a few ms: 5% of the offered load"))
    return checks


def report(df, out: str) -> str:
    rows = []
    for cdf in WORKLOADS:
        try:
            r = _row(df, cdf)
        except LookupError:
            continue
        short, mean, p99, util = PAPER[cdf]
        rows.append((cdf, f"{r['slowdown_A_p99']:.3f}", f"{short:.3f}", f"{r['slowdown_A_median']:.3f}",
                     f"{r['slowdown_mean']:.2f}", f"{mean:.2f}", f"{r['slowdown_p99']:.2f}", f"{p99:.2f}",
                     f"{r['goodput_gbps'] / r['offered_window_gbps']:.3f}", f"{util:.3f}", int(r["flows_finished"])))
    return ("dcPIM paper Fig. 3 at 0.6 load, 144-host leaf-spine (A = flows < 1 BDP = 71,540 B)\n"
            + table(rows, ["workload", "p99 A", "paper", "median A", "mean all", "paper", "p99 all", "paper",
                           "delivered/offered", "paper util", "flows"]))


REPRO = Repro("dcpim-paper", "dcPIM: near-optimal p99 slowdown of short flows at 0.6 load, 144-host leaf-spine",
              "dcPIM SIGCOMM'22 Fig. 3", build, report, _checks())
