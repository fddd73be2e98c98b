"""NDP paper Fig. 22: a permutation on the 128-host fat tree with the link from one core switch
down to an upper-pod (aggregation) switch cut from 10 to 1 Gb/s. With its path penalties NDP routes
around the slow link; without them the flows into that pod starve (paper: ~15 flows at ~3 Gb/s);
a few DCTCP flows (ECMP onto the slow link) fall below 1 Gb/s.

Set-up as htsim's failure example (the code behind the figure): only the core-to-aggregation
direction is slowed, the minimum RTO is 50 ms, and each flow's rate is measured over 100-200 ms.
The paper's figure uses an initial window of 15 packets; htsim's published example uses 23 (its
rates: without penalties 14 flows at 4.1-4.9 Gb/s, the rest above 9.5; with them slowest 9.2)."""

from ..sweep.spec import SweepSpec
from .base import Repro
from .common import dctcp_like_ndp_paper, ndp_base, setups_axis, table


def _ndp(iw: int, penalty: bool, dur: float, warmup: float) -> dict:
    s = ndp_base(8, dur, warmup)
    s["transport"] = dict(s["transport"], initial_window_packets=iw, path_penalty=penalty, min_rto_us=50000.0)
    return s


def build(quick: bool) -> SweepSpec:
    # Penalties need > 100 feedback samples on the slow path, which at 1 Gb/s takes tens of ms.
    dur, warmup = (80000.0, 40000.0) if quick else (200000.0, 100000.0)
    setups = [_ndp(15, True, dur, warmup), _ndp(15, False, dur, warmup)]
    if not quick:
        setups += [_ndp(23, True, dur, warmup), _ndp(23, False, dur, warmup)]
    setups.append(dctcp_like_ndp_paper(8, dur, warmup))
    base = dict(setups[0])
    base["workload"] = [{"kind": "permutation", "size_bytes": 10**11}]
    base["topology"] = dict(base["topology"],
                            link_overrides=[{"a": "core0", "b": "agg0_0", "rate_gbps": 1.0, "one_way": True}])
    return SweepSpec(base=base, axes=setups_axis(*setups), name="ndp-fig22")


def label(protocol: str, transport: dict) -> str:
    if protocol != "ndp":
        return protocol
    pen = "" if transport.get("path_penalty", True) else ", no penalty"
    return f"ndp (IW {transport['initial_window_packets']}{pen})"


def report(df, out: str) -> str:
    from ..plots import sorted_throughput
    from ..sweep import load_flows, load_summary

    flows, windows = {}, {}
    for _, r in df[df["status"] == "done"].iterrows():
        name = label(r["protocol"], r["transport,queue,routing,net"][0])
        flows[name] = load_flows(out, r["key"])
        windows[name] = load_summary(out, r["key"])["window_ps"]
    data = sorted_throughput(flows, windows, f"{out}/ndp_fig22.png")
    rows = []
    for name, sub in data.groupby("label"):
        rows.append((name, f"{sub['gbps'].mean():.2f}", f"{sub['gbps'].min():.2f}", int((sub["gbps"] < 5).sum())))
    return ("NDP Fig. 22, core0 -> agg0_0 at 1 Gb/s (paper: NDP with penalty fine; without it ~15 flows at ~3 Gb/s; "
            "DCTCP worst 0.4 Gb/s)\n" + table(rows, ["setup", "mean Gb/s", "slowest Gb/s", "flows < 5 Gb/s"]))


REPRO = Repro("ndp-fig22", "NDP under asymmetry: a degraded core link, with and without path penalties",
              "NDP SIGCOMM'17 Fig. 22", build, report)
