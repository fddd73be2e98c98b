"""NDP paper section 6.2, "Larger topologies": a permutation on ever larger fat trees with 8-packet
buffers, 9 KB packets and IW 30. The paper: utilisation "gently decreases from 98% (128 node
FatTree) to 90% in a 8192 node FatTree".

Full variant: 128, 1,024 and 8,192 hosts (k = 8, 16, 32), 5 ms each after a 1 ms warm-up; quick:
128 and 432 hosts (k = 8, 12). Only the end points are in the paper's text."""

from ..sweep.spec import SweepSpec
from .base import FRACTION, Repro, paper_value
from .common import done, ndp_base, table


def build(quick: bool) -> SweepSpec:
    ks = [8, 12] if quick else [8, 16, 32]
    base = ndp_base(ks[0], 6000.0, 1000.0)
    base["workload"] = [{"kind": "permutation", "size_bytes": 10**11}]
    return SweepSpec(base=base, axes={"topology.k": ks}, name="ndp-scale")


def _util(df, k: int) -> float:
    return float(done(df, **{"topology.k": k})["goodput_normalized"].iloc[0])


SCALE = "'from 98% (128 node FatTree) to 90%' (8192 nodes), to the percent; a few points for another simulator"


CHECKS = [
    paper_value("utilisation, 128 hosts (k = 8)", 0.98, 0.03, lambda df, out: _util(df, 8),
                physical=FRACTION, reason=SCALE),
    paper_value("utilisation, 8,192 hosts (k = 32)", 0.90, 0.04, lambda df, out: _util(df, 32), full_only=True,
                physical=FRACTION, reason=SCALE),
]


def report(df, out: str) -> str:
    paper = {8: "0.98", 32: "0.90"}
    rows = [(int(k), int(k) ** 3 // 4, f"{_util(df, int(k)):.3f}", paper.get(int(k), "-"))
            for k in sorted(done(df)["topology.k"].unique())]
    return ("NDP permutation on larger fat trees (paper: 98% at 128 hosts down to 90% at 8,192)\n"
            + table(rows, ["k", "hosts", "utilisation", "paper"]))


REPRO = Repro("ndp-scale", "NDP permutation utilisation vs fat-tree size", "NDP SIGCOMM'17 section 6.2", build,
              report, CHECKS)
