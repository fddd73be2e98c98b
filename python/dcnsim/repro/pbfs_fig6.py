"""PB-FS Fig. 6 (Aaronson and Cohen, IFIP Networking 2024, section V-B): CC-postcards in the lossless
runs of Fig. 5 (`pbfs_fig5`, PB-FS on): (a) fewer than four postcards per flow that is large enough
to use PB-FS, for DCQCN, TIMELY and HPCC; (b) for HPCC, postcards by the sending switch's distance
from the source: most congestion is at the destination ToR's downlinks (our proxy: the share of
postcards sent by ToR switches; the distance histogram is in the report)."""

import math

from ..sweep.spec import SweepSpec
from . import pbfs_common as pc
from .base import FRACTION, Measure, Repro, at_least, at_most, ours
from .common import table
from .pbfs_fig5 import registered


def build(quick: bool) -> SweepSpec:
    ts = [pc.transport(cc, "pbfs", **pc.LOSSLESS_TIMEOUTS) for cc in registered()]
    return SweepSpec(base=pc.base(quick, pfc=True), axes={"transport": ts}, name="pbfs-fig6")


def per_flow(df, out, cc: str) -> float:
    t = pc.summary(df, out, cc, "pbfs")["transport"]
    return pc.ratio(t["postcards_received"], t["pbfs_eligible_flows"])


def _per_flow(cc: str) -> Measure:
    return lambda df, out: per_flow(df, out, cc)


def tor_share(df, out, cc: str) -> float:
    p = pc.summary(df, out, cc, "pbfs")["postcards"]
    return pc.ratio(p["sent_by_tier"].get("edge", 0), p["sent"])


FEWER_THAN_FOUR = "'the number of postcards used for each flow is less than four' (Fig. 6a)"


def _fewest(df, out) -> float:
    return min(per_flow(df, out, cc) for cc in pc.CCS.values())


CHECKS = [
    at_most(f"postcards per eligible flow, {name}", 4.0, _per_flow(cc),
            claim=FEWER_THAN_FOUR) for name, cc in pc.CCS.items()
] + [
    # The bound above passes a PB-FS that never hears of congestion: zero postcards.
    ours("postcards per eligible flow, fewest of DCQCN, TIMELY and HPCC", 1.0, math.inf, _fewest, baseline=0.0,
         reason="ours: PB-FS hears of the congestion its flows meet, one postcard per flow at least"),
    # Fig. 6b: "most of the congestion occurs in the downstream ports of the destination ToR switches".
    at_least("share of HPCC postcards sent by ToR switches", 0.5, lambda df, out: tor_share(df, out, "hpcc"),
             claim="most postcards come from the destination ToR (Fig. 6b); ours counts every ToR", physical=FRACTION),
]


def report(df, out: str) -> str:
    rows = []
    for name, cc in pc.CCS.items():
        try:
            s = pc.summary(df, out, cc, "pbfs")
        except LookupError:
            continue
        t, p = s["transport"], s["postcards"]
        dist = [t.get(f"postcards_from_distance_{d}", 0) for d in range(1, 6)]
        rows.append((name, t["pbfs_eligible_flows"], t["postcards_received"], f"{per_flow(df, out, cc):.2f}",
                     t["postcards_ignored"], t["pbfs_rate_reductions"], t["max_postcards_per_flow"],
                     " ".join(map(str, dist)), " ".join(f"{k}:{v}" for k, v in sorted(p["sent_by_tier"].items()))))
    head = ["CC", "eligible flows", "postcards", "per flow", "ignored", "reductions", "max/flow",
            "by distance 1..5", "by tier"]
    return "PB-FS Fig. 6: CC-postcards in the lossless runs\n" + table(rows, head)


REPRO = Repro("pbfs-fig6", "PB-FS CC-postcards: fewer than 4 per eligible flow, mostly from the destination ToR",
              "Aaronson and Cohen, IFIP Networking 2024, Fig. 6", build, report, CHECKS)
