"""NDP paper Fig. 16: N senders each send 450 KB to one host; last- and first-flow completion
against the optimum. NDP ~1% over the optimum with the slowest flow <= 20% after the fastest;
DCTCP ~5% over with a wide spread; pHost about ten times slower than NDP (432-to-1: 1-1.5 s)."""

from ..sweep.spec import SweepSpec
from .base import Check, Repro
from .common import done, incast_optimum_us, ndp_base, table

SIZE = 450_000


def build(quick: bool) -> SweepSpec:
    k, ns = (6, [4, 16, 32, 53]) if quick else (12, [1, 10, 50, 100, 200, 300, 431])
    base = ndp_base(k, 5_000_000.0, 0.0)
    base["workload"] = [{"kind": "incast", "senders": ns[0], "size_bytes": SIZE, "at_us": 1.0, "receiver": 0}]
    axes = {"setup": ["ndp-paper", "dctcp-ndp-paper", "phost-ndp-paper"], "workload[0].senders": ns}
    return SweepSpec(base=base, axes=axes, name="ndp-fig16")


def _worst_over_optimum(df, out, protocol):
    """The largest relative excess of the last completion over the optimum, across N (N >= 4)."""
    from ..sweep import load_flows

    worst = 0.0
    for _, r in done(df, protocol=protocol).iterrows():
        n = int(r["workload[0].senders"])
        if n >= 4:
            worst = max(worst, load_flows(out, r["key"])["fct_ps"].max() / 1e6 / incast_optimum_us(n, SIZE) - 1)
    return worst


CHECKS = [Check("NDP last completion over the optimum (worst N)", 0.01, 0.04,
                lambda df, out: _worst_over_optimum(df, out, "ndp"))]


def report(df, out: str) -> str:
    from ..sweep import load_flows

    rows = []
    for _, r in df[df["status"] == "done"].sort_values(["protocol", "workload[0].senders"]).iterrows():
        f = load_flows(out, r["key"])
        n = int(r["workload[0].senders"])
        last, first = f["fct_ps"].max() / 1e6, f["fct_ps"].min() / 1e6
        opt = incast_optimum_us(n, SIZE)
        rows.append((r["protocol"], n, f"{opt:.0f}", f"{last:.0f}", f"{100 * (last / opt - 1):+.1f}%", f"{first:.0f}",
                     f"{last / first:.2f}"))
    return ("NDP Fig. 16, N x 450 KB incast "
            "(paper: NDP ~1% over optimum, spread <= 1.2; DCTCP ~5% over; pHost ~10x NDP)\n"
            + table(rows, ["protocol", "senders", "optimum us", "last us", "over", "first us", "last/first"]))


REPRO = Repro("ndp-fig16", "Incast completion vs number of senders: NDP, DCTCP, pHost", "NDP SIGCOMM'17 Fig. 16",
              build, report, CHECKS)
