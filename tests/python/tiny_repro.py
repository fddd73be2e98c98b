"""A reproduction entry of one 10 KB flow on two hosts, for the tests of the repro checks and reports.
Its one check measures flows finished plus one (so 2), to land inside or outside a chosen tolerance."""

from dcnsim.repro.base import Repro, paper_value
from dcnsim.sweep.spec import SweepSpec


def tiny_repro(tolerance: float, what: str = "flows finished") -> Repro:
    base = {"duration_us": 300.0, "topology": {"kind": "single_switch", "hosts": 2, "host_rate_gbps": 10.0},
            "transport": {"protocol": "dctcp"}, "workload": [{"kind": "flow_list", "flows": [[0, 1, 10_000, 0.0]]}]}
    finished = paper_value(what, 1.0, tolerance, lambda df, out: df["flows_finished"].iloc[0] + 1,
                           reason="one flow of one run")
    return Repro("tiny", "one flow", "none", lambda quick: SweepSpec(base=base, name="tiny"),
                 lambda df, out: "report", [finished])
