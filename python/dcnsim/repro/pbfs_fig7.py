"""PB-FS Fig. 7 (Aaronson and Cohen, IFIP Networking 2024, section V-C): a lossy fabric (no PFC, 2 MB
shared buffers, go-back-N with a 100 us timeout) running rate-based DCTCP with slow start (SS), fast
start at line rate (FS) and PB-FS: median, 95th and 99th percentile FCT of short flows, and the loss
rates (the paper: 2%, 15.7% and 7.9%; PB-FS's median at least 70% better than SS and FS except for
one-packet flows, its tails between FS's and SS's).

Marking: the HPCC reference's DCTCP run (`run.py --cc dctcp`, on which the paper's simulator builds) marks
with a step at 75 KB (25 Gb/s ports) and 300 KB (100 Gb/s), not the RoCE runs' RED (100-400 KB, Pmax 0.2).
With 2 MB buffers a 25 Gb/s port dropped at about 222 KB (alpha 1/8 until session 9: 1/9 of the buffer; now
the paper's 11% of the free buffer, 198 KB), where RED marks 8% of packets: DCTCP then runs on losses, and in
steady state go-back-N collapses (quick fabric, 10-20 ms, alpha 1/8: 14-16% loss for SS, FS and PB-FS alike,
half of the data sent are retransmissions, goodput 1.2 of 2.2 Tb/s offered). Timing: arrivals 0-20 ms counted
from 10 ms (`pbfs_common.STEADY`), as Fig. 5: the first 6 ms are the load's ramp. Loss rates are the
measurement window's drops over the window's data packets sent (the summary's `window_counts`); until session
8 they divided the window's drops (port counters restart with the window) by the whole run's sends, which
understated them by the share of sends before 10 ms (quick FS: 5.65% instead of 9.77%).

The paper also ran 8 MB buffers: "no packet loss is observed in the simulation, even when FS is used.
Thus, FS performs better than SS." The sweep runs SS, FS and PB-FS at 8 MB too (`BUFFERS`)."""

from ..sweep.spec import SweepSpec
from . import pbfs_common as pc
from .base import FRACTION, CheckOptions, Repro, at_least, at_most, ordering, paper_value
from .common import table

STARTS = {"SS": "slow_start", "FS": "line_rate", "PB-FS": "pbfs"}


# The HPCC reference's DCTCP run (`run.py --cc dctcp`): step marking, K = 30 KB x rate / 10 Gb/s at dequeue
# (75 KB at the 25 Gb/s host ports, 300 KB at the 100 Gb/s fabric ports), Pmax 1.
STEP = {"priorities": 2, "ecn": "step", "ecn_at": "dequeue", "ecn_k_bytes": 75_000,
        "fabric": {"ecn": "step", "ecn_at": "dequeue", "ecn_k_bytes": 300_000}}


# The paper's two buffer sizes: 2 MB (Fig. 7, losses) and 8 MB (no loss, FS better than SS).
SMALL, LARGE = 2_000_000, 8_000_000
BUFFERS = [SMALL, LARGE]


def variant(quick: bool, steady: bool, step: bool, buffers=(SMALL,)) -> SweepSpec:
    """Timing (SHORT or STEADY), marking (RED of the RoCE runs or the reference's DCTCP step), buffers."""
    ts = [pc.transport("dctcp_rate", s, timeout_us=100.0, short_timeout_us=100.0) for s in STARTS.values()]
    base = pc.base(quick, pfc=False, buffer_bytes=SMALL, steady=steady)
    if step:
        base["queue"] = dict(STEP)
    axes = {"transport": ts}
    if list(buffers) != [SMALL]:
        axes["switch.buffer_bytes"] = list(buffers)
    return SweepSpec(base=base, axes=axes, name="pbfs-fig7")


def build(quick: bool) -> SweepSpec:
    return variant(quick, steady=True, step=True, buffers=BUFFERS)


def _at(df, buffer: int):
    """The runs with `buffer` bytes per switch (all runs of a sweep without the buffer axis)."""
    if "switch.buffer_bytes" not in df:
        return df
    return df[df["switch.buffer_bytes"].fillna(SMALL).astype(int) == buffer]


def _summary(df, out, start: str, buffer: int = SMALL) -> dict:
    return pc.summary(_at(df, buffer), out, "dctcp_rate", start)


def _counts(s: dict) -> tuple:
    """(drops, data packets sent, retransmitted) in the measurement window; without `window_counts` (runs
    stored before it existed) the window's drops and the whole run's transport counters."""
    w = s.get("window_counts")
    if w is None:
        return s["queues"]["drops"], s["transport"]["data_packets_sent"], s["transport"]["retransmitted_packets"]
    return w["drops"], w["transport"]["data_packets_sent"], w["transport"]["retransmitted_packets"]


def loss(df, out, start: str, buffer: int = SMALL) -> float:
    """Dropped packets over data packets sent (retransmissions included), in the measurement window."""
    drops, sent, _ = _counts(_summary(df, out, start, buffer))
    return pc.ratio(drops, sent)


def median_ratio(other: str, lo: int, hi: int, buffer: int = SMALL):
    """Median FCT of flows of lo..hi bytes with start `other` over PB-FS's (or FS's at 8 MB)."""
    def measure(df, out) -> float:
        ref = "pbfs" if buffer == SMALL else "line_rate"
        d = _at(df, buffer)
        return pc.ratio(pc.short_fct_us(d, out, "dctcp_rate", other, 0.5, lo, hi),
                        pc.short_fct_us(d, out, "dctcp_rate", ref, 0.5, lo, hi))
    return measure


LOSS: CheckOptions = {"physical": FRACTION, "reason": "a loss percentage of one ns-3 run, to its first digits"}
SEVENTY = "'at least 70% better than those of SS and FS' read as 1.7x (section V-C)"


CHECKS = [
    # "the loss percentages for SS, FS, and PB-FS, which are 2%, 15.7%, and 7.9%".
    paper_value("loss rate, SS", 0.02, 0.015, lambda df, out: loss(df, out, "slow_start"), **LOSS),
    paper_value("loss rate, FS", 0.157, 0.1, lambda df, out: loss(df, out, "line_rate"), **LOSS),
    paper_value("loss rate, PB-FS", 0.079, 0.06, lambda df, out: loss(df, out, "pbfs"), **LOSS),
    # PB-FS prevents part of FS's losses: about half of FS's (0.079 / 0.157).
    paper_value("loss rate PB-FS / FS", 0.5, 0.3,
                lambda df, out: pc.ratio(loss(df, out, "pbfs"), loss(df, out, "line_rate")),
                baseline=1.0, reason="the ratio of two of the paper's percentages; 0.3 either way, clear of 1"),
    # "For the median FCT, PB-FS's results are at least 70% better than those of SS and FS for all short
    # flows except for one-packet flows": read as the other start's median >= 1.7x PB-FS's (70% lower
    # is impossible: the ideal FCT of a 2-packet flow is about 20 us, 70% below SS's 37 us is 11 us).
    at_least("median FCT SS / PB-FS, 2-4 pkts", 1.7, median_ratio("slow_start", *pc.GROUPS[1][1:]), claim=SEVENTY),
    at_least("median FCT SS / PB-FS, 5-7 pkts", 1.7, median_ratio("slow_start", *pc.GROUPS[2][1:]), claim=SEVENTY),
    at_least("median FCT FS / PB-FS, 2-4 pkts", 1.7, median_ratio("line_rate", *pc.GROUPS[1][1:]), claim=SEVENTY),
    at_least("median FCT FS / PB-FS, 5-7 pkts", 1.7, median_ratio("line_rate", *pc.GROUPS[2][1:]), claim=SEVENTY),
    # 8 MB: "no packet loss is observed in the simulation, even when FS is used. Thus, FS performs better than SS."
    at_most("loss rate, FS, 8 MB buffers", 0.0, lambda df, out: loss(df, out, "line_rate", LARGE), slack=0.0005,
            physical=FRACTION, claim="'no packet loss is observed'; ours: a loss in 2,000 packets at most"),
    ordering("median FCT SS / FS, 2-7 pkts, 8 MB buffers", "SS", "FS",
             median_ratio("slow_start", pc.PAYLOAD + 1, pc.SHORT_BYTES, LARGE), margin=1.05,
             claim="'FS performs better than SS' with 8 MB buffers; ours: 5% at least"),
]


def retransmitted(df, out, start: str, buffer: int = SMALL) -> float:
    """Retransmitted data packets over data packets sent (go-back-N resends more than it lost)."""
    _, sent, resent = _counts(_summary(df, out, start, buffer))
    return pc.ratio(resent, sent)


def report(df, out: str) -> str:
    rows = []
    for buffer in BUFFERS:
        for name, start in STARTS.items():
            try:
                f = pc.flows(_at(df, buffer), out, "dctcp_rate", start)
            except LookupError:
                continue
            qs = [f"{pc.fct_us(f, lo, hi, q):.1f}" for q in (0.5, 0.95, 0.99) for _, lo, hi in pc.GROUPS]
            retx = f"{100 * retransmitted(df, out, start, buffer):.2f}%"
            rows.append((f"{buffer // 1_000_000} MB", name, f"{100 * loss(df, out, start, buffer):.2f}%", retx, *qs))
    head = ["buffers", "start", "loss", "retransmitted",
            *[f"{q} {g[0]}" for q in ("p50", "p95", "p99") for g in pc.GROUPS]]
    title = "PB-FS Fig. 7: lossy (no PFC, go-back-N), rate DCTCP; loss in the measurement window; FCT in us\n"
    return title + table(rows, head)


REPRO = Repro("pbfs-fig7", "PB-FS without PFC (go-back-N, 2 MB buffers): SS vs FS vs PB-FS with rate DCTCP",
              "Aaronson and Cohen, IFIP Networking 2024, Fig. 7", build, report, CHECKS)
