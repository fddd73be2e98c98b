"""NDP paper Figs. 18-19, collateral damage: a long flow to host 1 and a 64-to-1 incast of 900 KB
to host 2 on the same ToR. With NDP the long flow dips for less than a millisecond (the first RTT
of the incast is trimmed, then pulls pace it); with DCTCP both suffer longer. DCQCN (lossless, PFC,
setup "dcqcn-ndp-paper" with its 200 buffers per port scaled to the switches' port count) loses
nothing, but PFC pauses the upstream switches again and again and the long flow with them."""

from ..sweep.spec import SweepSpec
from .base import Repro, at_most
from .common import done, ndp_base, table


def build(quick: bool) -> SweepSpec:
    k = 8 if quick else 12  # 4 or 6 hosts per ToR; hosts 1 and 2 share ToR 0
    hosts = k ** 3 // 4
    per_tor = k // 2
    flows = [[hosts - 1, 1, 1 << 40, 0.0]]  # the long flow, from another pod
    flows += [[s, 2, 900_000, 2000.0] for s in list(range(per_tor, hosts - 1))[:64]]
    base = ndp_base(k, 12000.0, 0.0)
    base["workload"] = [{"kind": "flow_list", "flows": flows}]
    base["metrics"] = {"sample_interval_us": 100.0}
    # DCQCN's "200 buffers per port, shared between interfaces": 200 x 9 KB x k ports per switch.
    dcqcn_switch = {"buffer_bytes": 200 * k * 9000, "pfc": True}
    setups = [["ndp-paper", {}], ["dctcp-ndp-paper", {}], ["dcqcn-ndp-paper", dcqcn_switch]]
    return SweepSpec(base=base, axes={"setup,switch": setups}, name="ndp-fig19")


def _ms_below(df, out, protocol):
    """Time the long flow spends below 80% of its rate before the incast (ms)."""
    import pandas as pd

    from ..sweep.store import Store

    key = done(df, protocol=protocol)["key"].iloc[0]
    ts = pd.read_parquet(Store(out, create=False).run_dir(key) / "timeseries.parquet")
    h1 = ts[(ts["series"] == "host_rx_gbps") & (ts["name"] == "host1")]
    before = h1[(h1["time_ps"] > 1_000_000_000) & (h1["time_ps"] <= 2_000_000_000)]["value"].mean()
    during = h1[(h1["time_ps"] > 2_000_000_000) & (h1["time_ps"] <= 12_000_000_000)]
    return float((during["value"] < 0.8 * before).sum()) * 0.1


CHECKS = [at_most("NDP: ms the long flow spends below 80%", 1.0, lambda df, out: _ms_below(df, out, "ndp"),
                  claim="with NDP the long flow dips for under a millisecond (Fig. 19, read off the plot)")]


def report(df, out: str) -> str:
    import pandas as pd

    from ..plots import new_figure, save_figure

    fig, ax = new_figure(figsize=(6, 3.6))
    rows = []
    for _, r in df[df["status"] == "done"].iterrows():
        ts = pd.read_parquet(f"{out}/runs/{r['key']}/timeseries.parquet")
        h1 = ts[(ts["series"] == "host_rx_gbps") & (ts["name"] == "host1")]
        ax.plot(h1["time_ps"] / 1e9, h1["value"], label=r["protocol"])
        before = h1[(h1["time_ps"] > 1_000_000_000) & (h1["time_ps"] <= 2_000_000_000)]["value"].mean()
        during = h1[(h1["time_ps"] > 2_000_000_000) & (h1["time_ps"] <= 12_000_000_000)]
        low = during[during["value"] < 0.8 * before]
        rows.append((r["protocol"], f"{before:.2f}", f"{during['value'].min():.2f}", f"{len(low) * 0.1:.1f}"))
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("long flow throughput (Gb/s)")
    ax.axvline(2.0, color="grey", lw=0.8)
    ax.legend()
    save_figure(f"{out}/ndp_fig19.png", fig)
    return ("NDP Figs. 18-19: long flow to host 1 while 64 x 900 KB go to host 2 on its ToR from t = 2 ms "
            "(paper: NDP dips < 1 ms; DCTCP longer; DCQCN's long flow paused again and again)\n"
            + table(rows, ["protocol", "long flow before (Gb/s)", "minimum after", "ms below 80%"]))


REPRO = Repro("ndp-fig19", "NDP collateral damage of an incast on a nearby flow", "NDP SIGCOMM'17 Figs. 18-19",
              build, report, CHECKS)
