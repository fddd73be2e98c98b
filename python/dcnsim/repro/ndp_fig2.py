"""NDP paper Fig. 2 (section 3.1), collapse and phase effects of naive trimming: N unresponsive
flows, each able to fill the 10 Gb/s link alone, converge on one switch port; the figure gives
each scheme's mean goodput as a percentage of the ideal fair share (solid) and the mean of the
worst 10% of flows (dashed). CP (Cut Payload, Cheng et al., NSDI'14) keeps one FIFO: payloads cut
above its threshold leave headers queued behind data, so "the mean goodput of the CP flows
decreases, as an increasing fraction of the link is occupied by trimmed packet headers" (9 KB
packets: the best case), and phase effects "render CP very unfair". An NDP switch (headers in
their own queue served 10:1, a full data queue trimming the arrival or its tail with probability
1/2) "avoids CP's collapse, and also avoids strong phase effects".

The senders are NDP senders whose first window is the whole flow (`initial_window_packets` = its
packets): they blast at line rate and never hear in time to respond (their NICs stay busy with the
first window, so nothing they resend leaves during the run). CP is our trimming queue with
`trim_mode = "cut_payload"` (setup `cp-ndp-paper`: one class, as the NDP authors'
`CutPayloadQueue`, its threshold half the buffer: 8 packets of data, 16 in all); NDP is the
`ndp-paper` switch. All on
one switch with equal links, as regular as the paper's simulation.

The figure's curves are not in the paper's text, so the checks take its statements: CP's mean
follows the header-occupancy law (its link carries every header, each arrival beyond the link's
rate a 64-byte header, so data gets (W - N h) / (W - h) of it, W the 9,000-byte packet and h the
header); NDP keeps over 90% of the fair share; CP's worst 10% get under half its mean; NDP's worst
10% are within a fifth of its mean.

Full variant: N = 2..125 flows, 3 ms (1 ms warm-up); quick: N = 10, 50, 100."""

from typing import Any, Dict, List

from ..setups import NDP_PAPER_NET
from ..sweep.spec import SweepSpec
from .base import FRACTION, Repro, ours
from .common import done, ndp_packets, table

DURATION_US, WARMUP_US = 3000.0, 1000.0
PACKETS = 500  # 4.5 MB: more than a 10 Gb/s NIC sends in the run
SETUPS = {"cp": "cp-ndp-paper", "ndp": "ndp-paper"}


def build(quick: bool) -> SweepSpec:
    ns = [10, 50, 100] if quick else [2, 5, 10, 20, 35, 50, 75, 100, 125]
    base = {"seed": 1, "duration_us": DURATION_US, "measure": {"warmup_us": WARMUP_US}, "setup": "ndp-paper",
            "topology": {"kind": "single_switch", "hosts": ns[0] + 1, "host_rate_gbps": 10.0, "host_delay_us": 1.0},
            "transport": {"initial_window_packets": PACKETS}}
    points = []
    for n in ns:
        flows = [[s, 0, ndp_packets(PACKETS), 0.0] for s in range(1, n + 1)]
        points.append([n + 1, [{"kind": "flow_list", "flows": flows}]])
    axes: Dict[str, List[Any]] = {"topology.hosts,workload": points, "setup": [SETUPS["cp"], SETUPS["ndp"]]}
    return SweepSpec(base=base, axes=axes, name="ndp-fig2")


def collapse_law(n: int) -> float:
    """CP's data share of the link with n line-rate flows: every arrival beyond the link's rate is
    a header on the link. W d + h (n w - d) = W w, with w the link's packet rate and d the data."""
    big, h = NDP_PAPER_NET["mtu_bytes"], NDP_PAPER_NET["header_bytes"]
    return max(0.0, (big - n * h) / (big - h))


def _switch(r) -> str:
    return "cp" if r["setup"] == SETUPS["cp"] else "ndp"


def _runs(df, out):
    """Per run: switch, N, mean and worst-10% goodput as fractions of the ideal fair share."""
    from ..sweep import load_flows, load_summary

    rows = []
    for _, r in done(df).iterrows():
        secs = load_summary(out, r["key"])["window_ps"] / 1e12
        flows = load_flows(out, r["key"])
        n = len(flows)
        fair = 10e9 * (1 - NDP_PAPER_NET["header_bytes"] / NDP_PAPER_NET["mtu_bytes"]) / n
        good = flows["window_bytes"].to_numpy() * 8 / secs / fair
        good.sort()
        worst = good[:max(1, len(good) // 10)]
        rows.append({"switch": _switch(r), "n": n, "mean": float(good.mean()), "worst": float(worst.mean())})
    return sorted(rows, key=lambda x: (x["switch"], x["n"]))


def _at(df, out, switch: str, n: int) -> dict:
    for r in _runs(df, out):
        if r["switch"] == switch and r["n"] == n:
            return r
    raise LookupError(f"no {switch} run with {n} flows")


# Fig. 2 is curves without numbers in the text: the criteria are ours, CP's from the header-occupancy
# law (`collapse_law`), labelled so.
LAW = "ours: the header-occupancy law (Fig. 2's collapse, no number in the text), 0.1 either way"


def _law_check(n: int):
    return ours(f"CP mean goodput / fair share, {n} flows (header-occupancy law)", collapse_law(n) - 0.1,
                collapse_law(n) + 0.1, lambda df, out: _at(df, out, "cp", n)["mean"], reason=LAW, physical=FRACTION)


def _fairness(switch: str, n: int = 50):
    return lambda df, out: _at(df, out, switch, n)["worst"] / _at(df, out, switch, n)["mean"]


CHECKS = [
    _law_check(50),
    _law_check(100),
    ours("NDP mean goodput / fair share, 100 flows (no collapse)", 0.9, 1.0,
         lambda df, out: _at(df, out, "ndp", 100)["mean"], physical=FRACTION,
         reason="ours: NDP 'avoids CP's collapse' (Fig. 2), read as 90% of the fair share at least"),
    ours("CP worst 10% / mean, 50 flows (phase effects: 'very unfair')", 0.0, 0.5, _fairness("cp"), baseline=1.0,
         reason="ours: 'very unfair' read as the worst tenth at most half the mean", physical=FRACTION),
    ours("NDP worst 10% / mean, 50 flows (no strong phase effects)", 0.8, 1.0, _fairness("ndp"), baseline=0.25,
         reason="ours: 'avoids strong phase effects' read as the worst tenth at 80% of the mean at least",
         physical=FRACTION),
]


def report(df, out: str) -> str:
    rows = [(r["switch"], r["n"], f"{100 * r['mean']:.1f}", f"{100 * r['worst']:.1f}",
             f"{100 * collapse_law(r['n']):.1f}" if r["switch"] == "cp" else "-") for r in _runs(df, out)]
    return ("NDP Fig. 2, N line-rate flows into one 10 Gb/s port: goodput as % of the fair share (paper: CP's "
            "mean collapses as headers fill the link, its worst 10% far lower; NDP neither)\n"
            + table(rows, ["switch", "flows", "mean %", "worst 10% %", "header-occupancy law %"]))


REPRO = Repro("ndp-fig2", "Collapse and phase effects of naive trimming (CP) against an NDP switch",
              "NDP SIGCOMM'17 Fig. 2", build, report, CHECKS)
