"""ExpressPass's convergence with many senders (Dart, section VI-D): 10 long ExpressPass flows from
hosts in other racks to one receiver on the ExpressPass fabric, all starting together; how long until
every flow's data rate is within 10 % of the fair share and stays there. Dart ran the authors'
simulator: 4 RTTs for two senders on a dumbbell (credit queues share fairly), but about 20 RTTs for 10
senders to one receiver on the paper's fat tree, where the feedback control (BIC-like, w_init =
alpha = 1/16) has to find each flow's rate iteratively. The authors' code's feedback control is checked;
the paper's Algorithm 1 (`feedback = "paper"`) runs beside it, reported.

Fabric: `xpass-fabric`'s (48 hosts quick, 192 full; 10 Gb/s, 250-packet queues, symmetric ECMP).
Dart's other case runs beside it and is checked too: two senders to two receivers on a dumbbell, the
second joining a busy bottleneck, with the code's alpha = w_init = 1/2 (the authors' dumbbell script);
the time until the joiner reaches 80 % of its share, in that run's base RTTs (Dart: 4; the paper's
convergence figure: 3 RTTs at alpha = 1/2).

RTT unit: the ExpressPass paper's 52 us maximum RTT of that fabric. Fair share: the flows' total data
rate over the last half of the run, over 10 (what the bottleneck delivers, net of credits and
headers). Rates are measured from the packets each sender sent over 200 us windows (~4 RTTs: a flow
at its 1 Gb/s share sends one 1538 B frame every 12 us, so a shorter window quantises by more than
the 10 % band); the convergence time is thus resolved to about 4 RTTs.

The check fails here and is left failing: our model matches the authors' code point by point, and
at this fan-in the code's law does not settle. The report's second table shows why: each flow adds
w x the NIC's maximum credit rate per update, so 10 flows add 10 w of it together and the offered
credits overshoot the receiver NIC's credit rate (p90 2.15x against 1.19x with 2 senders); each cut
sets a flow to its own measured credit rate (keeping the flows' ratios, plus the noise of a few
credits), and increases shrink the differences by only w per update. With 2 and 4 senders
(reported) the flows share far better (Jain 0.997 and 0.95 against 0.69). See
docs/protocols/expresspass.md and tests/expresspass_fan_in.rs."""

from __future__ import annotations

from ..sweep.spec import SweepSpec
from .base import Repro, paper_value
from .common import done, table
from .dart_convergence import flow_rates
from .xpass_fabric import fabric, protocol_tables

SENDERS = 10
RTT_US = 52.0
WINDOW_US = 200.0
SAMPLE_US = 2.0
BAND = 0.10
# Credit share of a link: the average 84 B credit over it plus a 1538 B frame (the NIC's credit rate).
CREDIT_FRACTION = 84.0 / (84.0 + 1538.0)
# The authors' code's feedback control (checked) and the paper's Algorithm 1 (reported).
FEEDBACKS = ["code", "paper"]
# Fewer senders, the code's control, reported: more credits per flow per RTT.
FEWER = [2, 4]
AXIS = "topology,transport,workload"
# Dart's other case: two senders to two receivers across a dumbbell, where the flows meet at a switch's
# credit queue; the second joins a busy bottleneck (the paper's convergence runs). With the code's
# defaults, alpha = w_init = 1/2, as the authors' dumbbell script leaves them (the paper's
# convergence figure: 3 RTTs at alpha = 1/2).
DUMBBELL = {"kind": "dumbbell", "hosts_per_side": 2, "host_rate_gbps": 10.0, "bottleneck_rate_gbps": 10.0,
            "host_delay_us": 4.5, "bottleneck_delay_us": 4.0}
JOIN_US = 1000.0
JOIN_SHARE = 0.8


def senders(hosts_per_tor: int, hosts: int, n: int = SENDERS) -> list:
    """n senders spread over the other racks (the receiver is host 0)."""
    pool = [h for h in range(hosts) if h >= hosts_per_tor]
    step = len(pool) // n
    return pool[::step][:n]


def build(quick: bool) -> SweepSpec:
    topo = fabric(quick)
    hosts = topo["pods"] * topo["tors_per_pod"] * topo["hosts_per_tor"]
    t = protocol_tables("expresspass")
    transport = t.pop("transport")

    def wl(n):
        return [{"kind": "flow_list", "flows": [[s, 0, 10**12, 0.0] for s in senders(topo["hosts_per_tor"], hosts, n)]}]

    runs = [[topo, {**transport, "feedback": fb}, wl(SENDERS)] for fb in FEEDBACKS]
    runs += [[topo, {**transport, "feedback": "code"}, wl(n)] for n in FEWER]
    join = [{"kind": "flow_list", "flows": [[0, 2, 10**12, 0.0], [1, 3, 10**12, JOIN_US]]}]
    runs.append([DUMBBELL, {**transport, "feedback": "code", "alpha": 0.5, "w_init": 0.5}, join])
    base = {"seed": 1, "duration_us": 5_000.0 if quick else 20_000.0, **t,
            "trace": {"flows": list(range(SENDERS)), "state_interval_us": SAMPLE_US}}
    return SweepSpec(base=base, axes={AXIS: runs}, name="xpass-convergence")


def run_key(df, feedback="code", n=SENDERS) -> str:
    """The store key of the finished run with this feedback and n senders."""
    d = done(df)
    keep = [v[0]["kind"] != "dumbbell" and v[1]["feedback"] == feedback and len(v[2][0]["flows"]) == n
            for v in d[AXIS]]
    if not any(keep):
        raise LookupError(f"no finished run with feedback {feedback} and {n} senders")
    return d[keep].iloc[0]["key"]


def _run_rates(df, out, feedback="code", window_us=WINDOW_US, n=SENDERS):
    from ..sweep.store import Store

    return flow_rates(Store.open(out).run_dir(run_key(df, feedback, n)), window_us=window_us, sample_us=SAMPLE_US)


def fair_share(rates) -> float:
    """Gb/s per flow: the flows' total over the last half of the run, over their number."""
    late = rates[rates.index >= rates.index.max() / 2]
    return float(late.sum(axis=1).mean()) / rates.shape[1]


def convergence(df, out, feedback="code", n=SENDERS):
    """(RTTs from the start until every flow stays within the band, converged?, fair share Gb/s).
    Not converged: the run's length, a lower bound."""
    rates = _run_rates(df, out, feedback, n=n)
    fair = fair_share(rates)
    inside = ((rates - fair).abs() <= BAND * fair).all(axis=1)
    end_us = rates.index[-1] / 1e6
    if not inside.iloc[-1]:
        return end_us / RTT_US, False, fair
    outside = inside[~inside]
    first_in = rates.index[0] if outside.empty else inside[inside.index > outside.index[-1]].index[0]
    return first_in / 1e6 / RTT_US, True, fair


def jain(rates) -> float:
    """Jain's fairness index of the flows' rates, averaged over the last half of the run."""
    late = rates[rates.index >= rates.index.max() / 2]
    return float((late.sum(axis=1) ** 2 / (rates.shape[1] * (late**2).sum(axis=1))).mean())


def credit_loss(df, out, feedback="code", n=SENDERS) -> float:
    """Fraction of the credits offered to NIC credit queues that they dropped (the receiver's own NIC
    is the only credit bottleneck here)."""
    import json

    from ..sweep.store import Store

    run = Store.open(out).run_dir(run_key(df, feedback, n))
    cs = json.loads((run / "summary.json").read_text())["credit_shaping"]
    return cs["nic_credits_dropped"] / max(1, cs["nic_credits_dropped"] + cs["nic_credits_sent"])


def join_rtts(df, out) -> float:
    """Base RTTs from the join until the joining flow's rate (over windows of 2 RTTs) first reaches
    JOIN_SHARE of its fair share (half of what the two flows carry over the last half of the run)."""
    import json

    from ..sweep.store import Store

    d = done(df)
    keep = [v[0]["kind"] == "dumbbell" for v in d[AXIS]]
    if not any(keep):
        raise LookupError("no finished dumbbell run")
    run = Store.open(out).run_dir(d[keep].iloc[0]["key"])
    rtt_us = json.loads((run / "summary.json").read_text())["base_rtt_ps"] / 1e6
    rates = flow_rates(run, window_us=2 * rtt_us, sample_us=SAMPLE_US)
    fair = fair_share(rates)
    after = rates[rates.index >= JOIN_US * 1e6]
    hit = after[after.iloc[:, 1] >= JOIN_SHARE * fair]
    if hit.empty:
        return float("inf")
    return (hit.index[0] / 1e6 - JOIN_US) / rtt_us


def law(df, out, feedback="code", n=SENDERS) -> tuple:
    """What the receivers' feedback did over the last half of the run: the credits all flows offered
    to the receiver's NIC over what it forwards (p10, p50, p90), the median and p10 factor by which a
    decrease cut a flow's credit rate, and the mean w at an increase. From the traced credit rates
    (a change of a flow's rate between two samples is one update)."""
    import numpy as np
    import pandas as pd

    from ..sweep.store import Store

    fs = pd.read_parquet(Store.open(out).run_dir(run_key(df, feedback, n)) / "flow_state.parquet")
    names = fs["variable"].astype(str)

    def series(var):
        return fs[names == var].pivot_table(index="time_ps", columns="flow_id", values="value").sort_index().ffill()

    rate, w = series("credit_rate_gbps"), series("w")
    rate = rate[rate.index >= rate.index.max() / 2]
    w = w.reindex(rate.index).ffill()
    nic_credit_gbps = 10.0 * CREDIT_FRACTION  # every receiver here has a 10 Gb/s NIC
    offered = np.percentile(rate.sum(axis=1) / nic_credit_gbps, [10, 50, 90])
    ratio = (rate / rate.shift()).iloc[1:]
    cuts = ratio.values[ratio.values < 0.9999]
    w_up = w.iloc[1:].values[ratio.values > 1.0001]
    return offered, float(np.median(cuts)), float(np.percentile(cuts, 10)), float(w_up.mean())


CHECKS = [
    # Dart VI-D: "ExpressPass converges in 4 RTTs for two senders and two receivers in a simple dumbbell
    # topology (matches ExpressPass paper's results)"; the paper: 3 RTTs at alpha = 1/2. Accepted 1-7.
    paper_value("RTTs until a flow joining a busy dumbbell reaches 80% of its share (Dart VI-D: 4)", 4.0, 3.0,
                join_rtts, reason="Dart's 4 RTTs against the ExpressPass paper's 3: 3 RTTs either way"),
    # Dart VI-D: "it takes 20 RTTs for 10 senders and one receiver in the fat tree topology".
    # Accepted 10-30 RTTs on both variants: iterative (not the credit queues' few RTTs), not unbounded.
    paper_value("RTTs until all 10 flows hold within 10% of the fair share (Dart VI-D: 20)", 20.0, 10.0,
                lambda df, out: convergence(df, out)[0],
                reason="a figure stated in Dart's text for ExpressPass's simulator; half of it either way"),
]


def report(df, out: str) -> str:
    rows, mechanism = [], []
    for fb, n in [(fb, SENDERS) for fb in FEEDBACKS] + [("code", n) for n in FEWER]:
        r, ok, fair = convergence(df, out, fb, n)
        rates = _run_rates(df, out, fb, n=n)
        last = rates[rates.index >= 0.9 * rates.index.max()].mean()
        slow = _run_rates(df, out, fb, window_us=1000.0, n=n)
        rows.append((n, fb, f"{r:.1f}" if ok else f"> {r:.0f} (not within 10% by the end)", f"{r * RTT_US:.0f}",
                     f"{fair:.2f}", f"{last.min():.2f} - {last.max():.2f}", f"{jain(rates):.3f}",
                     f"{jain(slow):.3f}", f"{credit_loss(df, out, fb, n):.0%}"))
        offered, cut, deep, w_up = law(df, out, fb, n)
        mechanism.append((n, fb, " / ".join(f"{x:.2f}" for x in offered), f"{cut:.2f}", f"{deep:.2f}", f"{w_up:.3f}"))
    dumbbell = (f"Two senders to two receivers on a dumbbell (alpha = w_init = 1/2): the second flow, joining "
                f"at {JOIN_US / 1000:g} ms, reaches {JOIN_SHARE:.0%} of its share {join_rtts(df, out):.1f} base RTTs "
                "later (Dart: 4; the paper: 3)\n\n")
    return (dumbbell + "ExpressPass senders to one receiver: time until every flow stays within 10% of the fair share "
            f"(RTT {RTT_US:.0f} us, rates over {WINDOW_US:.0f} us windows); {SENDERS} senders checked, fewer reported\n"
            + table(rows, ["senders", "feedback", "RTTs", "us", "fair share (Gb/s)", "rates at the end (Gb/s)",
                           "Jain index", "Jain, 1 ms windows", "NIC credit loss"])
            + "\n\nThe feedback over the last half: credits offered to the receiver's NIC over what it forwards, "
            "the factor a decrease cut a flow's rate by, and w at an increase (each flow adds w x the NIC's "
            "maximum credit rate per update, so n flows add n w of it together)\n"
            + table(mechanism, ["senders", "feedback", "offered / NIC credit rate p10 / p50 / p90", "median cut",
                                "p10 cut", "mean w at an increase"]))


REPRO = Repro("xpass-convergence", "ExpressPass: 10 senders to one receiver converge iteratively (about 20 RTTs)",
              "Dart, IEEE/ACM ToN'20, section VI-D (ExpressPass SIGCOMM'17's simulator)", build, report, CHECKS)
