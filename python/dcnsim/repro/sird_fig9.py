"""SIRD paper Fig. 9 (section 6) in simulation: a 6-to-1 incast of 1 MB messages in a closed loop on
10 Gb/s links, no Ethernet priorities, and a 7th host sending 8-byte probes (closed loop) to the same
receiver: probe latency measures the receiver's downlink queue. Paper: with credit pacing the p99
probe latency is ~5 us above unloaded; eager (unpaced) credit adds more.

Our hosts have no receive batching, so credit is clocked by data arrivals and the global bucket B
bounds the downlink queue at about B - BDP with or without pacing; the probes themselves (traffic
the credit pacer does not account for) push a paced receiver to that bound. Without probes, pacing
keeps the queue below it: the report's second pair of rows."""

from ..sweep.spec import SweepSpec
from .base import ANY, Repro, paper_value
from .common import table

REPLY_US = 2.0  # the 8-byte reply's one-way time, before the next message or probe


def build(quick: bool) -> SweepSpec:
    incast = {"name": "incast", "kind": "closed_loop", "sources": [1, 2, 3, 4, 5, 6], "receiver": 0,
              "size_bytes": 1_000_000, "think_us": REPLY_US, "exclude_from_slowdown": True}
    probe = {"name": "probe", "kind": "closed_loop", "sources": [7], "receiver": 0, "size_bytes": 8,
             "think_us": REPLY_US}
    duration = 5000.0 if quick else 50000.0
    base = {
        "seed": 1, "duration_us": duration, "measure": {"warmup_us": 500.0},
        "topology": {"kind": "single_switch", "hosts": 8, "host_rate_gbps": 10.0, "host_delay_us": 1.0},
        "queue": {"priorities": 1},
        "routing": {"load_balancing": "ecmp"},
        "transport": {"protocol": "sird", "use_priorities": False},
        "workload": [incast, probe],
    }
    variants = [[pace, wl] for wl in ([incast, probe], [incast]) for pace in (True, False)] + [[True, [probe]]]
    return SweepSpec(base=base, axes={"transport.pace_credits,workload": variants}, name="sird-fig9")


AXIS = "transport.pace_credits,workload"


def _probe_p99_us(df, out, pace, with_incast):
    """p99 one-way latency of the probes that started in the window (us)."""
    import numpy as np

    from ..sweep import load_flows, load_summary

    for _, r in df[df["status"] == "done"].iterrows():
        p, wl = r[AXIS]
        if p == pace and ("incast" in [w["name"] for w in wl]) == with_incast and "probe" in [w["name"] for w in wl]:
            f, s = load_flows(out, r["key"]), load_summary(out, r["key"])
            probes = f[(f["workload"] == "probe") & f["fct_ps"].notna() & (f["start_ps"] >= s["window_start_ps"])]
            return float(np.quantile(probes["fct_ps"].astype("float64").to_numpy() / 1e6, 0.99))
    raise LookupError(f"no finished run with pace_credits = {pace}, incast = {with_incast}")


CHECKS = [paper_value("paced credit: p99 probe latency over unloaded (us)", 5.0, 2.0,
                      lambda df, out: _probe_p99_us(df, out, True, True) - _probe_p99_us(df, out, True, False),
                      physical=ANY, reason="'adds only 5 us' at the 99th percentile (Fig. 9); 2 us either way")]


def report(df, out: str) -> str:
    import numpy as np

    from ..plots import new_figure, save_figure
    from ..sweep import load_flows, load_summary

    rows = []
    fig, ax = new_figure(figsize=(5.5, 3.6))
    for _, r in df[df["status"] == "done"].iterrows():
        pace, wl = r[AXIS]
        names = [w["name"] for w in wl]
        pacing = "paced credit" if pace else "no credit pacing"
        label = "probes alone" if names == ["probe"] else (pacing if "probe" in names else f"{pacing}, no probes")
        f = load_flows(out, r["key"])
        s = load_summary(out, r["key"])
        probes = f[(f["workload"] == "probe") & f["fct_ps"].notna() & (f["start_ps"] >= s["window_start_ps"])]
        lat = np.sort(probes["fct_ps"].astype("float64").to_numpy() / 1e6)
        rx = r["goodput_gbps"]
        if len(lat):
            ax.plot(lat, np.arange(1, len(lat) + 1) / len(lat), label=label)
        if len(lat) == 0:
            rows.append((label, 0, "-", "-", "-", f"{rx:.2f}", f"{r['max_switch_bytes']:,}"))
            continue
        rows.append((label, len(lat), f"{np.median(lat):.2f}", f"{np.quantile(lat, 0.99):.2f}", f"{lat.max():.2f}",
                     f"{rx:.2f}", f"{r['max_switch_bytes']:,}"))
    ax.set_xlabel("probe one-way latency (us)")
    ax.set_ylabel("CDF")
    ax.legend()
    save_figure(f"{out}/sird_fig9.png", fig)
    return ("SIRD Fig. 9, 8-byte probes behind a 6-to-1 closed-loop incast of 1 MB messages (10 Gb/s; paper: paced "
            "credit adds ~5 us at p99 over unloaded, unpaced credit more)\n"
            + table(rows, ["setting", "probes", "p50 us", "p99 us", "max us", "goodput Gb/s", "max switch queue B"])
            + f"\nwrote {out}/sird_fig9.png")


REPRO = Repro("sird-fig9", "SIRD credit pacing under a closed-loop incast", "SIRD Fig. 9", build, report, CHECKS)
