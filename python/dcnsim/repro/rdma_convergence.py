"""Convergence of two flows for each RDMA congestion control (issue 12; the HPCC paper, SIGCOMM'19,
sections 2-3 and 5: HPCC converges to the fair share within a few RTTs, DCQCN and TIMELY take far
longer). One 100 Gb/s switch, 1 us links (base RTT about 4.3 us); flow 0 (host 1 -> host 0) starts
at once, flow 1 (host 2 -> host 0) joins at JOIN_US. Each protocol runs as the HPCC authors' ns-3
runs it (the *-hpcc-paper setups: 1000 B payloads, their marking, PFC buffers, INT for HPCC). The
rates come from the flow state series (`[trace] state_interval_us`).

Convergence time: from the join until the two rates stay within 10% of their mean (|r0 - r1| <=
0.1 (r0 + r1)) for the rest of the run, on the raw 2-us samples and on 100-us trailing means (DCQCN's
rates keep making excursions long after their means have settled). How much of the link the pair
uses is reported apart: the lone flow's rate (HPCC holds eta = 95% of line rate) and the second-half
means.
The papers plot rate over time and give no number for it, so the checks are the ordering: HPCC
within a few tens of RTTs, DCQCN and TIMELY at least ten times slower (or not within the run).
Rate-based DCTCP is window-bound here (two 1-BDP windows queue less than its marking threshold):
its rate stays at line rate while the windows share the link, so it has no rate convergence time."""

from __future__ import annotations

import math

from ..sweep.spec import SweepSpec
from .base import FRACTION, Repro, ours, paper_value
from .common import done, table

SETUPS = {"hpcc": "hpcc-paper", "dcqcn": "dcqcn-hpcc-paper", "timely": "timely-hpcc-paper",
          "dctcp_rate": "dctcp-rate-hpcc-paper"}
JOIN_US = 201.0
RTT_US = 4.3
TOLERANCE = 0.1
SAMPLE_US = 2.0
SMOOTH_US = 100.0  # the averaging window of the second, coarser convergence time


def build(quick: bool) -> SweepSpec:
    duration = 5000.0 if quick else 30000.0
    base = {"seed": 1, "duration_us": duration, "measure": {"warmup_us": 0.0},
            "topology": {"kind": "single_switch", "hosts": 3, "host_rate_gbps": 100.0, "host_delay_us": 1.0},
            "workload": [{"kind": "flow_list", "flows": [[1, 0, 10**12, 1.0], [2, 0, 10**12, JOIN_US]]}],
            "trace": {"flows": [0, 1], "state_interval_us": SAMPLE_US}}
    return SweepSpec(base=base, axes={"setup": list(SETUPS.values())}, name="rdma-convergence")


def _run(df, protocol: str):
    return done(df, setup=SETUPS[protocol]).iloc[0]


def rates(df, out: str, protocol: str):
    """{flow: (times us, rates Gb/s)} from the run's flow state series."""
    import pandas as pd

    from ..sweep.store import Store

    s = pd.read_parquet(Store.open(out).run_dir(_run(df, protocol)["key"]) / "flow_state.parquet")
    s = s[s["variable"].astype(str) == "rate_gbps"]
    return {f: (g["time_ps"].to_numpy() / 1e6, g["value"].to_numpy()) for f, g in s.groupby("flow_id")}


def _split_settled(t0, r0, t1, r1, tol: float = TOLERANCE) -> float:
    """us after the join from which, at every common sample time, both rates are within `tol` of their
    mean (|r0 - r1| / (r0 + r1) <= tol); inf if the last sample is still outside."""
    other = dict(zip(t1, r1))
    pairs = [(t, a, other[t]) for t, a in zip(t0, r0) if t >= JOIN_US and t in other]
    if not pairs:
        raise LookupError("no common samples after the join")
    bad = [t for t, a, b in pairs if abs(a - b) > tol * (a + b)]
    if not bad:
        return 0.0
    return math.inf if bad[-1] >= pairs[-1][0] else bad[-1] + SAMPLE_US - JOIN_US


def convergence(df, out: str, protocol: str) -> dict:
    r = rates(df, out, protocol)
    t0, r0 = r[0]
    before = [x for ti, x in zip(t0, r0) if JOIN_US - 100.0 < ti < JOIN_US]
    alone = sum(before) / len(before)
    end = t0[-1]
    means = [float(r[f][1][r[f][0] >= end / 2].mean()) for f in (0, 1)]
    jain = sum(means) ** 2 / (2 * sum(m * m for m in means))
    smooth = _split_settled(r[0][0], _trailing_mean(r[0][1]), r[1][0], _trailing_mean(r[1][1]))
    return {"alone": alone, "us": _split_settled(*r[0], *r[1]), "smooth_us": smooth, "end": end, "means": means,
            "jain": jain}


def _trailing_mean(r):
    """Each sample replaced by the mean of the last SMOOTH_US of samples (fewer at the start)."""
    import numpy as np

    n = max(1, int(SMOOTH_US / SAMPLE_US))
    c = np.cumsum(np.insert(np.asarray(r, dtype=float), 0, 0.0))
    i = np.arange(1, len(r) + 1)
    lo = np.maximum(0, i - n)
    return (c[i] - c[lo]) / (i - lo)


def _slower(df, out, protocol: str) -> float:
    """1 when `protocol` takes at least ten times HPCC's convergence time (or does not converge)."""
    return float(convergence(df, out, protocol)["us"] >= 10 * convergence(df, out, "hpcc")["us"])


FAR_SLOWER = "ours: 'far slower' than HPCC (no number) read as ten times HPCC's time at least"
FAIR = "ours: the flows share fairly once converged (no number): a Jain index of 0.99 at least"


CHECKS = [
    ours("HPCC: both rates within 10% of their mean after (RTTs; paper: a few; accepted <= 8)", 0.0, 8.0,
         lambda df, out: convergence(df, out, "hpcc")["us"] / RTT_US,
         reason="ours: 'within a few RTTs' (no number) read as at most 8"),
    paper_value("HPCC: lone flow at eta x line rate (Gb/s)", 95.0, 1.0,
                lambda df, out: convergence(df, out, "hpcc")["alone"],
                reason="HPCC's target utilisation eta = 95% of 100 Gb/s; 1 Gb/s for the rate's sampling"),
    ours("DCQCN at least 10x slower than HPCC, or not within the run (1 = yes)", 1.0, 1.0,
         lambda df, out: _slower(df, out, "dcqcn"), physical=FRACTION, reason=FAR_SLOWER),
    ours("TIMELY at least 10x slower than HPCC, or not within the run (1 = yes)", 1.0, 1.0,
         lambda df, out: _slower(df, out, "timely"), physical=FRACTION, reason=FAR_SLOWER),
    ours("HPCC: Jain index of the mean rates over the second half", 0.99, 1.0,
         lambda df, out: convergence(df, out, "hpcc")["jain"], physical=FRACTION, reason=FAIR),
    ours("DCQCN: Jain index of the mean rates over the second half (30 ms run)", 0.99, 1.0,
         lambda df, out: convergence(df, out, "dcqcn")["jain"], full_only=True, physical=FRACTION, reason=FAIR),
]


def report(df, out: str) -> str:
    rows = []
    for p in SETUPS:
        try:
            c = convergence(df, out, p)
        except (LookupError, KeyError, FileNotFoundError) as e:
            rows.append((p, f"not run: {e}", "", "", "", "", ""))
            continue
        us, smooth = (f"> {c['end'] - JOIN_US:.0f} (not in the run)" if math.isinf(x) else f"{x:.0f}"
                      for x in (c["us"], c["smooth_us"]))
        if p == "dctcp_rate":
            us = smooth = "- (window-bound: rate at line)"
        rtts = "-" if math.isinf(c["us"]) or p == "dctcp_rate" else f"{c['us'] / RTT_US:.0f}"
        rows.append((p, f"{c['alone']:.2f}", us, rtts, smooth, " / ".join(f"{m:.2f}" for m in c["means"]),
                     f"{c['jain']:.4f}"))
    return (f"Two flows on one 100 Gb/s port, the second joining at {JOIN_US:.0f} us: time until both stay within "
            f"{TOLERANCE:.0%} of their mean\n"
            + table(rows, ["protocol", "alone Gb/s", "converged after us", "RTTs",
                           f"on {SMOOTH_US:.0f}-us means, after us", "second-half means Gb/s", "Jain"]))


REPRO = Repro("rdma-convergence", "Two-flow convergence of HPCC, DCQCN, TIMELY and rate-based DCTCP (rate over time)",
              "HPCC SIGCOMM'19 (qualitative: HPCC within a few RTTs, DCQCN/TIMELY far slower)", build, report, CHECKS)
