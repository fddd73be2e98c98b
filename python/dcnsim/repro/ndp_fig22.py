"""NDP paper Fig. 22: a permutation on the 128-host fat tree with one core-to-aggregation link
reduced from 10 to 1 Gb/s. With its path penalty NDP routes around the slow link; without it about
15 flows drop to ~3 Gb/s; a few DCTCP flows (ECMP onto the slow link) fall below 1 Gb/s."""

from ..sweep.spec import SweepSpec
from .base import Repro
from .common import dctcp_like_ndp_paper, ndp_base, setups_axis, table


def build(quick: bool) -> SweepSpec:
    dur = 40000.0 if quick else 100000.0  # the path scoreboard needs > 100 samples per path
    ndp = ndp_base(8, dur, 2000.0)
    nopen = ndp_base(8, dur, 2000.0)
    nopen["transport"] = dict(nopen["transport"], path_penalty=False)
    dctcp = dctcp_like_ndp_paper(8, dur, 2000.0)
    base = ndp
    base["workload"] = [{"kind": "permutation", "size_bytes": 10**11}]
    base["topology"]["link_overrides"] = [{"a": "core0", "b": "agg1_0", "rate_gbps": 1.0}]
    return SweepSpec(base=base, axes=setups_axis(ndp, nopen, dctcp), name="ndp-fig22")


def report(df, out: str) -> str:
    from ..plots import sorted_throughput
    from ..sweep import load_flows, load_summary

    flows, windows = {}, {}
    for _, r in df[df["status"] == "done"].iterrows():
        tr = r["transport,queue,routing,net"][0]
        label = r["protocol"] + ("" if tr.get("path_penalty", True) or r["protocol"] != "ndp" else " (no penalty)")
        flows[label] = load_flows(out, r["key"])
        windows[label] = load_summary(out, r["key"])["window_ps"]
    data = sorted_throughput(flows, windows, f"{out}/ndp_fig22.png")
    rows = []
    for label, sub in data.groupby("label"):
        rows.append((label, f"{sub['gbps'].mean():.2f}", f"{sub['gbps'].min():.2f}", int((sub["gbps"] < 5).sum())))
    return ("NDP Fig. 22, one core link at 1 Gb/s (paper: NDP with penalty fine; without it ~15 flows at ~3 Gb/s; DCTCP worst 0.4 Gb/s)\n"
            + table(rows, ["setup", "mean Gb/s", "slowest Gb/s", "flows < 5 Gb/s"]))


REPRO = Repro("ndp-fig22", "NDP under asymmetry: a degraded core link, with and without path penalties", "NDP SIGCOMM'17 Fig. 22", build, report)
