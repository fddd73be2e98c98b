"""PB-FS Fig. 7 (Aaronson and Cohen, IFIP Networking 2024, section V-C): a lossy fabric (no PFC, 2 MB
shared buffers, go-back-N with a 100 us timeout) running rate-based DCTCP with slow start (SS), fast
start at line rate (FS) and PB-FS: median, 95th and 99th percentile FCT of short flows, and the loss
rates (the paper: 2%, 15.7% and 7.9%; PB-FS's median at least 70% better than SS and FS except for
one-packet flows, its tails between FS's and SS's).

Marking: the HPCC reference's DCTCP run (`run.py --cc dctcp`, on which the paper's simulator builds)
marks with a step at 75 KB (25 Gb/s ports) and 300 KB (100 Gb/s), not the RoCE runs' RED (100-400 KB,
Pmax 0.2). With 2 MB buffers a 25 Gb/s port drops at about 222 KB (alpha 1/8: 1/9 of the buffer), where
RED marks 8% of packets: DCTCP then runs on losses, and in steady state go-back-N collapses (quick
fabric, 10-20 ms: 14-16% loss for SS, FS and PB-FS alike, half of the data sent are retransmissions,
goodput 1.2 of 2.2 Tb/s offered). Timing: arrivals 0-20 ms counted from 10 ms (`pbfs_common.STEADY`),
as Fig. 5: the first 6 ms are the load's ramp. Loss rates are whole-run counters (ramp included)."""

from ..sweep.spec import SweepSpec
from . import pbfs_common as pc
from .base import Check, Repro
from .common import table

STARTS = {"SS": "slow_start", "FS": "line_rate", "PB-FS": "pbfs"}


# The HPCC reference's DCTCP run (`run.py --cc dctcp`): step marking, K = 30 KB x rate / 10 Gb/s at dequeue
# (75 KB at the 25 Gb/s host ports, 300 KB at the 100 Gb/s fabric ports), Pmax 1.
STEP = {"priorities": 2, "ecn": "step", "ecn_at": "dequeue", "ecn_k_bytes": 75_000,
        "fabric": {"ecn": "step", "ecn_at": "dequeue", "ecn_k_bytes": 300_000}}


def variant(quick: bool, steady: bool, step: bool) -> SweepSpec:
    """Timing (SHORT or STEADY) and marking (RED of the RoCE runs or the reference's DCTCP step)."""
    t = {"timeout_us": 100.0, "short_timeout_us": 100.0}
    ts = [pc.transport("dctcp_rate", s, **t) for s in STARTS.values()]
    base = pc.base(quick, pfc=False, buffer_bytes=2_000_000, steady=steady)
    if step:
        base["queue"] = dict(STEP)
    return SweepSpec(base=base, axes={"transport": ts}, name="pbfs-fig7")


def build(quick: bool) -> SweepSpec:
    return variant(quick, steady=True, step=True)


def loss(df, out, start: str) -> float:
    """Dropped data packets over data packets sent (retransmissions included)."""
    s = pc.summary(df, out, "dctcp_rate", start)
    return pc.ratio(s["queues"]["drops"], s["transport"]["data_packets_sent"])


CHECKS = [
    Check("loss rate, SS", 0.02, 0.02, lambda df, out: loss(df, out, "slow_start")),
    Check("loss rate, FS", 0.157, 0.1, lambda df, out: loss(df, out, "line_rate")),
    Check("loss rate, PB-FS", 0.079, 0.06, lambda df, out: loss(df, out, "pbfs")),
    # PB-FS prevents part of FS's losses: about half of FS's (0.079 / 0.157).
    Check("loss rate PB-FS / FS", 0.5, 0.3,
          lambda df, out: pc.ratio(loss(df, out, "pbfs"), loss(df, out, "line_rate"))),
]


def retransmitted(df, out, start: str) -> float:
    """Retransmitted data packets over data packets sent (go-back-N resends more than it lost)."""
    s = pc.summary(df, out, "dctcp_rate", start)
    return pc.ratio(s["transport"]["retransmitted_packets"], s["transport"]["data_packets_sent"])


def report(df, out: str) -> str:
    rows = []
    for name, start in STARTS.items():
        try:
            f = pc.flows(df, out, "dctcp_rate", start)
        except LookupError:
            continue
        qs = [f"{pc.fct_us(f, lo, hi, q):.1f}" for q in (0.5, 0.95, 0.99) for _, lo, hi in pc.GROUPS]
        retx = f"{100 * retransmitted(df, out, start):.2f}%"
        rows.append((name, f"{100 * loss(df, out, start):.2f}%", retx, *qs))
    head = ["start", "loss", "retransmitted", *[f"{q} {g[0]}" for q in ("p50", "p95", "p99") for g in pc.GROUPS]]
    title = "PB-FS Fig. 7: lossy (no PFC, 2 MB buffers, go-back-N), rate DCTCP; FCT in us\n"
    return title + table(rows, head)


REPRO = Repro("pbfs-fig7", "PB-FS without PFC (go-back-N, 2 MB buffers): SS vs FS vs PB-FS with rate DCTCP",
              "Aaronson and Cohen, IFIP Networking 2024, Fig. 7", build, report, CHECKS)
