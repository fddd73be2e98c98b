"""NDP paper Fig. 15, short-flow latency under load: two hosts repeatedly exchange 90 KB (ten 9 KB
packets), one transfer at a time, while every other host sources four long-running connections to
random destinations (never the two). The paper: NDP's median FCT 3x lower and its 99th percentile
4x lower than DCTCP's, its worst case about twice the idle optimum (standing queues: NDP's are
8 packets, DCTCP's up to 200).

Full variant: the 432-host tree (k = 12); quick: 54 hosts (k = 6). DCTCP runs as in the paper's
permutation (200-packet output queues, K = 30); DCQCN as in ndp-fig14 (lossless, 200 shared buffers
per port), reported without a check (the paper's text gives DCQCN here no number). MPTCP (setup
"mptcp-ndp-paper") "achieves the worst FCT of all solutions, with a median and tail ten times larger
than those of NDP, due to its greedy filling of network buffers"."""

import random

from ..sweep.spec import SweepSpec
from .base import FRACTION, Repro, paper_value
from .common import done, ndp_base, ndp_packets, table

SIZE = ndp_packets(10)  # the paper's 90 KB
A = 0  # the other end is the last host (another pod)


def _background(hosts: int, a: int, b: int, seed: int = 1):
    rng = random.Random(seed)
    others = [h for h in range(hosts) if h not in (a, b)]
    flows = []
    for src in others:
        for _ in range(4):
            dst = rng.choice([h for h in others if h != src])
            flows.append([src, dst, 1 << 40, 0.0])
    return flows


def build(quick: bool) -> SweepSpec:
    k, dur = (6, 20000.0) if quick else (12, 50000.0)
    hosts = k ** 3 // 4
    b = hosts - 1
    # Transfers start at 2 ms. A longer warm-up does not bring MPTCP nearer the paper's 10x: its
    # background drops from the first ms, and at steady state (500 ms) MPTCP's median falls to 1.56x
    # NDP's, the full queues being at the background's host links, off this path (docs/protocols/mptcp.md).
    base = ndp_base(k, dur, 2000.0)
    base["workload"] = [
        {"kind": "closed_loop", "name": "short", "sources": [A], "receiver": b, "size_bytes": SIZE, "start_us": 2000.0},
        {"kind": "flow_list", "name": "background", "flows": _background(hosts, A, b),
         "exclude_from_slowdown": True},
    ]
    dcqcn_switch = {"buffer_bytes": 200 * k * 9000, "pfc": True}
    setups = [["ndp-paper", {}], ["dctcp-ndp-paper", {}], ["dcqcn-ndp-paper", dcqcn_switch], ["mptcp-ndp-paper", {}]]
    return SweepSpec(base=base, axes={"setup,switch": setups}, name="ndp-fig15")


def _fct(df, out, protocol, q):
    from ..sweep import load_flows

    f = load_flows(out, done(df, protocol=protocol)["key"].iloc[0])
    s = f[(f["workload"] == "short") & f["fct_us"].notna()]
    return float(s["fct_us"].quantile(q))


FACTOR = "a factor stated in words ('three times lower'), read as half to one and a half of it"


CHECKS = [
    paper_value("DCTCP / NDP median FCT of the 90 KB flows", 3.0, 0.5,
                lambda df, out: _fct(df, out, "dctcp", 0.5) / _fct(df, out, "ndp", 0.5), relative=True,
                baseline=1.0, reason=FACTOR),
    paper_value("DCTCP / NDP 99th percentile FCT", 4.0, 0.5,
                lambda df, out: _fct(df, out, "dctcp", 0.99) / _fct(df, out, "ndp", 0.99), relative=True,
                baseline=1.0, reason=FACTOR),
    paper_value("MPTCP / NDP median FCT", 10.0, 0.5,
                lambda df, out: _fct(df, out, "mptcp", 0.5) / _fct(df, out, "ndp", 0.5), relative=True,
                baseline=1.0, reason=FACTOR),
    paper_value("MPTCP / NDP 99th percentile FCT", 10.0, 0.5,
                lambda df, out: _fct(df, out, "mptcp", 0.99) / _fct(df, out, "ndp", 0.99), relative=True,
                baseline=1.0, reason=FACTOR),
    # "During these experiments NDP and MPTCP achieved 80% network utilization".
    paper_value("MPTCP utilisation", 0.80, 0.08,
                lambda df, out: done(df, protocol="mptcp")["goodput_normalized"].iloc[0],
                physical=FRACTION, reason="'80% network utilization', one figure for both protocols"),
]


def report(df, out: str) -> str:
    from ..sweep import load_flows

    rows = []
    for _, r in df[df["status"] == "done"].iterrows():
        f = load_flows(out, r["key"])
        s = f[f["workload"] == "short"]
        fin = s["fct_us"].dropna()
        ideal = float(s["ideal_fct_us"].iloc[0])
        rows.append((r["protocol"], len(fin), int(s["fct_us"].isna().sum()), f"{ideal:.0f}",
                     f"{fin.median():.0f}", f"{fin.quantile(0.99):.0f}", f"{fin.max():.0f}",
                     f"{r['goodput_normalized']:.2f}"))
    return ("NDP Fig. 15, 90 KB transfers under background load (paper, 432 hosts: NDP median 3x and p99 4x lower "
            "than DCTCP; NDP worst ~2x the idle optimum; utilisation NDP 80%, DCTCP ~75%)\n"
            + table(rows, ["protocol", "transfers", "unfinished", "idle us", "median us", "p99 us", "max us",
                           "utilisation"]))


REPRO = Repro("ndp-fig15", "Short-flow FCT under background load: NDP vs DCTCP and MPTCP", "NDP SIGCOMM'17 Fig. 15",
              build, report, CHECKS)
