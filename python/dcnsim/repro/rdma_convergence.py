"""Convergence of two flows for each RDMA congestion control (issue 12; the HPCC paper, SIGCOMM'19,
sections 2-3 and 5: HPCC converges to the fair share within a few RTTs, DCQCN and TIMELY take far
longer). One 100 Gb/s switch, 1 us links (base RTT about 4.3 us); flow 0 (host 1 -> host 0) starts
at once, flow 1 (host 2 -> host 0) joins at JOIN_US. Each protocol runs as the HPCC authors' ns-3
runs it (the *-hpcc-paper setups: 1000 B payloads, their marking, PFC buffers, INT for HPCC). The
rates come from the flow state series (`[trace] state_interval_us`).

Convergence time: from the join until both flows' rates stay within 10% of half of what the lone
flow had just before the join (HPCC's lone flow holds eta = 95% of line rate) for the rest of the run.
The papers plot rate over time and give no number for it, so the checks are the ordering: HPCC
within a few tens of RTTs, DCQCN and TIMELY at least ten times slower (or not within the run).
Rate-based DCTCP is window-bound here (two 1-BDP windows queue less than its marking threshold):
its rate stays at line rate while the windows share the link, so it has no rate convergence time."""

from __future__ import annotations

import math

from ..sweep.spec import SweepSpec
from .base import Check, Repro
from .common import done, table

SETUPS = {"hpcc": "hpcc-paper", "dcqcn": "dcqcn-hpcc-paper", "timely": "timely-hpcc-paper",
          "dctcp_rate": "dctcp-rate-hpcc-paper"}
JOIN_US = 201.0
RTT_US = 4.3
TOLERANCE = 0.1
SAMPLE_US = 2.0


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


def _settled(t, r, target: float) -> float:
    """us after the join from which every sample stays within TOLERANCE of target; inf if the last does not."""
    bad = [ti for ti, ri in zip(t, r) if ti >= JOIN_US and abs(ri / target - 1.0) > TOLERANCE]
    if not bad:
        return 0.0
    return math.inf if bad[-1] >= t[-1] else bad[-1] + SAMPLE_US - JOIN_US


def convergence(df, out: str, protocol: str) -> dict:
    r = rates(df, out, protocol)
    t0, r0 = r[0]
    before = [x for ti, x in zip(t0, r0) if JOIN_US - 100.0 < ti < JOIN_US]
    alone = sum(before) / len(before)
    fair = alone / 2.0
    times = [_settled(*r[f], fair) for f in (0, 1)]
    end = t0[-1]
    means = [float(r[f][1][r[f][0] >= end / 2].mean()) for f in (0, 1)]
    jain = sum(means) ** 2 / (2 * sum(m * m for m in means))
    return {"alone": alone, "fair": fair, "us": max(times), "end": end, "means": means, "jain": jain}


def _slower(df, out, protocol: str) -> float:
    """1 when `protocol` takes at least ten times HPCC's convergence time (or does not converge)."""
    return float(convergence(df, out, protocol)["us"] >= 10 * convergence(df, out, "hpcc")["us"])


CHECKS = [
    Check("HPCC: both flows within 10% of the fair share after (RTTs; paper: a few; accepted <= 20)", 0.0, 20.0,
          lambda df, out: convergence(df, out, "hpcc")["us"] / RTT_US),
    Check("HPCC: lone flow at eta x line rate (Gb/s)", 95.0, 1.0,
          lambda df, out: convergence(df, out, "hpcc")["alone"]),
    Check("DCQCN at least 10x slower than HPCC, or not within the run (1 = yes)", 1.0, 0.0,
          lambda df, out: _slower(df, out, "dcqcn")),
    Check("TIMELY at least 10x slower than HPCC, or not within the run (1 = yes)", 1.0, 0.0,
          lambda df, out: _slower(df, out, "timely")),
    Check("HPCC: Jain index of the mean rates over the second half", 1.0, 0.01,
          lambda df, out: convergence(df, out, "hpcc")["jain"]),
    Check("DCQCN: Jain index of the mean rates over the second half (30 ms run)", 1.0, 0.01,
          lambda df, out: convergence(df, out, "dcqcn")["jain"], full_only=True),
]


def report(df, out: str) -> str:
    rows = []
    for p in SETUPS:
        try:
            c = convergence(df, out, p)
        except (LookupError, KeyError, FileNotFoundError) as e:
            rows.append((p, f"not run: {e}", "", "", "", ""))
            continue
        us = f"> {c['end'] - JOIN_US:.0f} (not within the run)" if math.isinf(c["us"]) else f"{c['us']:.0f}"
        if p == "dctcp_rate":
            us = "- (window-bound: its rate stays at line rate)"
        rtts = "-" if math.isinf(c["us"]) else f"{c['us'] / RTT_US:.0f}"
        rows.append((p, f"{c['alone']:.2f}", us, rtts, " / ".join(f"{m:.2f}" for m in c["means"]), f"{c['jain']:.4f}"))
    return (f"Two flows on one 100 Gb/s port, the second joining at {JOIN_US:.0f} us: time until both stay within "
            f"{TOLERANCE:.0%} of the fair share\n"
            + table(rows, ["protocol", "alone Gb/s", "converged after us", "RTTs", "second-half means Gb/s", "Jain"]))


REPRO = Repro("rdma-convergence", "Two-flow convergence of HPCC, DCQCN, TIMELY and rate-based DCTCP (rate over time)",
              "HPCC SIGCOMM'19 (qualitative: HPCC within a few RTTs, DCQCN/TIMELY far slower)", build, report, CHECKS)
