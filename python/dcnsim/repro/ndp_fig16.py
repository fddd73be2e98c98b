"""NDP paper Fig. 16: N senders each send 450 KB to one host; last- and first-flow completion against
the optimum. NDP ~1% over the optimum with the slowest flow <= 20% after the fastest; DCTCP ~5% over
with a wide spread (up to 7x), on large shared-buffer switches as the paper runs it (setup
"dctcp-shared-ndp-paper", with the timers of the authors' htsim driver for this figure; with
200-packet per-port queues it is +75% at 431 senders); pHost about ten times slower than NDP
(432-to-1: 1-1.5 s) and "4-5 times worse than MPTCP", which is "crippled by synchronized losses" on
its 200-packet queues even with "aggressively small timers" (Vasudevan et al.): setup
"mptcp-ndp-paper" with a 200 us RTO floor and a 1 ms initial RTO (our choice of small timers; the
paper gives no value)."""

from typing import Any, Dict, List

from ..sweep.spec import SweepSpec
from .base import Repro, at_most, paper_value
from .common import done, incast_cells, incast_outcome, ndp_base, ndp_packets, table

SIZE = ndp_packets(50)  # the paper's 450 KB
DURATION_US = 5_000_000.0


def build(quick: bool) -> SweepSpec:
    k, ns = (6, [4, 16, 32, 53]) if quick else (12, [1, 10, 50, 100, 200, 300, 431])
    base = ndp_base(k, DURATION_US, 0.0)
    base["workload"] = [{"kind": "incast", "senders": ns[0], "size_bytes": SIZE, "at_us": 1.0, "receiver": 0}]
    small_timers = {"min_rto_us": 200.0, "initial_rto_us": 1000.0, "rto_jitter": 0.5}
    setups = [["ndp-paper", {}], ["dctcp-shared-ndp-paper", {}], ["phost-ndp-paper", {}],
              ["mptcp-ndp-paper", small_timers]]
    axes: Dict[str, List[Any]] = {"setup,transport": setups, "workload[0].senders": ns}
    return SweepSpec(base=base, axes=axes, name="ndp-fig16")


def _outcome(out, r):
    from ..sweep import load_flows

    return incast_outcome(load_flows(out, r["key"]), int(r["workload[0].senders"]), SIZE, DURATION_US)


def _largest_n(df, out, protocol):
    """The protocol's incast outcome at the largest N."""
    return _outcome(out, done(df, protocol=protocol).sort_values("workload[0].senders").iloc[-1])


CHECKS = [
    # "DCQCN and NDP do even better, with a completion time just 1% slower than optimal" against DCTCP's
    # "on average, just 5%": NDP's band ends halfway, closer to its 1% than to DCTCP's 5%. At the largest
    # N: small incasts carry the first RTT's headers, NDP's worst overhead (the paper's Fig. 20).
    at_most("NDP last completion over the optimum, largest N", 0.01, lambda df, out: _largest_n(df, out, "ndp")["over"],
            slack=0.02, baseline=0.05, claim="'just 1% slower than optimal' (section 6.2); DCTCP's 5% outside"),
    paper_value("DCTCP last completion over the optimum, largest N", 0.05, 0.03,
                lambda df, out: _largest_n(df, out, "dctcp")["over"], baseline=0.01,
                reason="'on average, just 5%': the paper's mean over N, ours at one N; NDP's 1% outside"),
    # The paper (section 6.2's text; pHost is not a curve of Fig. 16): its 432-to-1 incast takes
    # pHost 1-1.5 s against NDP's 140 ms. Ours follows the pHost authors (requests after a 1 ms
    # timer) and ends with NDP's; the paper's TCP-based pHost waited for TCP's timer (with ours at
    # 100 ms / 1 s: 2.5x / 14x NDP; docs/protocols/ndp.md). The check records the gap.
    paper_value("pHost / NDP last completion at the largest N", 8.9, 0.5,
                lambda df, out: _largest_n(df, out, "phost")["last"] / _largest_n(df, out, "ndp")["last"],
                relative=True, full_only=True, baseline=1.0,
                reason="the paper's 1-1.5 s over 140 ms is 7.1-10.7: half either way holds it, not NDP's own 1"),
    # pHost's 1-1.5 s is "4-5 times worse than MPTCP": MPTCP's 432-to-1 ends at 0.2-0.375 s, 1.3-2.4x
    # the 155 ms optimum.
    paper_value("MPTCP last completion over the optimum, largest N", 0.9, 0.6,
                lambda df, out: _largest_n(df, out, "mptcp")["over"], full_only=True,
                reason="derived: 1-1.5 s over '4-5 times' is 0.2-0.375 s, 0.3-1.4 over the 155 ms optimum"),
]


def report(df, out: str) -> str:
    rows = []
    for _, r in df[df["status"] == "done"].sort_values(["protocol", "workload[0].senders"]).iterrows():
        o = _outcome(out, r)
        rows.append((r["protocol"], int(r["workload[0].senders"]), f"{o['optimum']:.0f}") + incast_cells(o))
    return ("NDP Fig. 16, N x 450 KB incast (paper: NDP ~1% over optimum, spread <= 1.2; DCTCP ~5% over; "
            "pHost 1-1.5 s at 432, ~10x NDP, 4-5x MPTCP). '>' = flows unfinished at the run's end (lower bound)\n"
            + table(rows, ["protocol", "senders", "optimum us", "last us", "over", "first us", "last/first",
                           "unfinished"]))


REPRO = Repro("ndp-fig16", "Incast completion vs number of senders: NDP, DCTCP, pHost, MPTCP", "NDP SIGCOMM'17 Fig. 16",
              build, report, CHECKS)
