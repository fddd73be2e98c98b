"""NDP paper Fig. 21, sender-limited traffic: A sends to B, C, D, E and F also sends to E. Fair
pull queues keep A's link and E's link full, A's four flows equal."""

from ..sweep.spec import SweepSpec
from .base import Repro, paper_value
from .common import done, ndp_base, table


def build(quick: bool) -> SweepSpec:
    base = ndp_base(4, 10000.0 if quick else 50000.0, 2000.0)
    # k = 4: hosts 2i, 2i+1 share a ToR; pick hosts on different ToRs, as the paper's figure does.
    a, b, c, d, e, f = 0, 4, 6, 8, 10, 12
    flows = [[src, dst, 1 << 40, 0.0] for src, dst in [(a, b), (a, c), (a, d), (a, e), (f, e)]]
    base["workload"] = [{"kind": "flow_list", "flows": flows}]
    return SweepSpec(base=base, axes={"seed": [1]}, name="ndp-fig21")


def _rates(df, out):
    """Gb/s of A->B, A->C, A->D, A->E, F->E over the measurement window."""
    from ..sweep import load_flows, load_summary

    key = done(df)["key"].iloc[0]
    secs = load_summary(out, key)["window_ps"] / 1e12
    return load_flows(out, key).sort_values("flow_id")["window_bytes"].to_numpy() * 8 / secs / 1e9


FAIR = "the fair shares Fig. 21 shows (A's 10 Gb/s in four, E's rest to F); 0.3 Gb/s of pull jitter"


CHECKS = [
    paper_value("slowest of A's four flows (Gb/s)", 2.5, 0.3, lambda df, out: _rates(df, out)[:4].min(), reason=FAIR),
    paper_value("fastest of A's four flows (Gb/s)", 2.5, 0.3, lambda df, out: _rates(df, out)[:4].max(), reason=FAIR),
    paper_value("F->E (Gb/s)", 7.5, 0.3, lambda df, out: _rates(df, out)[4], reason=FAIR),
]


def report(df, out: str) -> str:
    from ..sweep import load_flows, load_summary

    key = df["key"].iloc[0]
    f = load_flows(out, key)
    secs = load_summary(out, key)["window_ps"] / 1e12
    names = ["A->B", "A->C", "A->D", "A->E", "F->E"]
    paper = ["2.5", "2.5", "2.5", "2.5", "7.5"]
    rows = [(n, f"{b * 8 / secs / 1e9:.2f}", p) for n, b, p in zip(names, f["window_bytes"], paper)]
    return "NDP Fig. 21, sender-limited traffic (Gb/s; paper: A's and E's links full, A's flows equal)\n" + table(
        rows, ["flow", "dcnsim", "ideal"])


REPRO = Repro("ndp-fig21", "NDP sender-limited pull sharing", "NDP SIGCOMM'17 Fig. 21", build, report, CHECKS)
