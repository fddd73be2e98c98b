"""Plots of a run's results (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path


def slowdown_by_size(summary: dict, path) -> Path:
    """Median and p99 slowdown per flow-size group (the SIRD/Homa style figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [g for g in summary["slowdown_by_size"]]
    labels = [g["label"] for g in groups]
    med = [g["median"] if g["median"] is not None else float("nan") for g in groups]
    p99 = [g["p99"] if g["p99"] is not None else float("nan") for g in groups]
    x = range(len(groups))
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.bar([i - 0.2 for i in x], med, width=0.4, label="median")
    ax.bar([i + 0.2 for i in x], p99, width=0.4, label="p99")
    ax.set_xticks(list(x))
    ax.set_xticklabels([f"{g['group']}: {lab}\n{g['count']} flows" for g, lab in zip(groups, labels)], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    ax.set_xlabel("flow size")
    ax.axhline(1.0, color="grey", lw=0.8)
    title = summary.get("name") or summary.get("protocol", "")
    ax.set_title(f"{title}: {summary.get('protocol')} slowdown by size")
    ax.legend()
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p, dpi=120)
    plt.close(fig)
    return p


# Standard plots over a sweep's results table (dcnsim.results). Each returns the data it drew, so
# callers and tests can check the figure against the table.

def _figure(path, fig):
    p = Path(path)
    fig.tight_layout()
    fig.savefig(p, dpi=120)
    if p.suffix.lower() == ".png":
        fig.savefig(p.with_suffix(".pdf"))
    import matplotlib.pyplot as plt

    plt.close(fig)
    return p


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def slowdown_by_group(df, path, by: str = "protocol"):
    """Median and p99 slowdown per flow-size group, one series per `by` value (SIRD Fig. 6 style)."""
    import pandas as pd

    plt = _plt()
    done = df[df["status"] == "done"]
    groups = sorted({c.split("_")[1] for c in done.columns if c.startswith("slowdown_") and c.endswith("_median") and len(c.split("_")) == 3})
    rows = []
    for name, sub in done.groupby(by):
        for g in groups:
            rows.append({by: name, "group": g, "label": sub[f"size_group_{g}"].iloc[0],
                         "median": sub[f"slowdown_{g}_median"].mean(), "p99": sub[f"slowdown_{g}_p99"].mean()})
    data = pd.DataFrame(rows)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharex=True)
    for ax, stat in zip(axes, ["median", "p99"]):
        for name, sub in data.groupby(by):
            ax.plot(sub["label"], sub[stat], marker="o", label=str(name))
        ax.set_yscale("log")
        ax.set_title(f"{stat} slowdown")
        ax.set_xlabel("flow size group")
    axes[0].set_ylabel("slowdown")
    axes[1].legend(title=by)
    _figure(path, fig)
    return data


def queue_vs_goodput(df, path, by: str = "protocol", tier: str = "edge"):
    """Maximum switch queuing (summed over a switch's ports) against goodput across runs (SIRD Fig. 5)."""
    plt = _plt()
    done = df[df["status"] == "done"].copy()
    col = f"max_switch_bytes_{tier}" if f"max_switch_bytes_{tier}" in done else "max_switch_bytes"
    data = done[[by, "goodput_gbps", col]].rename(columns={col: "max_queue_bytes"}).sort_values([by, "goodput_gbps"])
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for name, sub in data.groupby(by):
        ax.plot(sub["goodput_gbps"], sub["max_queue_bytes"] / 1e6, marker="o", label=str(name))
    ax.set_xlabel("goodput (Gb/s)")
    ax.set_ylabel(f"max {tier} switch queuing (MB)")
    ax.legend(title=by)
    _figure(path, fig)
    return data.reset_index(drop=True)


def fct_cdf(flows_by_label: dict, path):
    """CDF of flow completion times, one curve per label (flows tables from dcnsim.sweep_flows)."""
    import numpy as np
    import pandas as pd

    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    rows = []
    for label, flows in flows_by_label.items():
        f = flows[flows["fct_ps"].notna()]
        x = np.sort(f["fct_ps"].astype("float64").to_numpy() / 1e6)
        y = np.arange(1, len(x) + 1) / max(len(x), 1)
        ax.plot(x, y, label=str(label))
        rows.append(pd.DataFrame({"label": label, "fct_us": x, "cdf": y}))
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("CDF")
    ax.legend()
    _figure(path, fig)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["label", "fct_us", "cdf"])


def sorted_throughput(flows_by_label: dict, window_ps_by_label: dict, path):
    """Per-flow throughput over the measurement window, sorted (NDP Fig. 14)."""
    import numpy as np
    import pandas as pd

    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    rows = []
    for label, flows in flows_by_label.items():
        secs = window_ps_by_label[label] / 1e12
        t = np.sort(flows["window_bytes"].astype("float64").to_numpy() * 8 / secs / 1e9)
        ax.plot(np.arange(len(t)), t, label=str(label))
        rows.append(pd.DataFrame({"label": label, "rank": np.arange(len(t)), "gbps": t}))
    ax.set_xlabel("flow rank")
    ax.set_ylabel("throughput (Gb/s)")
    ax.legend()
    _figure(path, fig)
    return pd.concat(rows, ignore_index=True)


def queue_by_tier(df, path, by: str = "protocol"):
    """Maximum switch queuing per tier, per `by` value (bars)."""
    import pandas as pd

    plt = _plt()
    done = df[df["status"] == "done"]
    tiers = [c[len("max_switch_bytes_"):] for c in done.columns if c.startswith("max_switch_bytes_")]
    data = done.groupby(by)[[f"max_switch_bytes_{t}" for t in tiers]].max()
    data.columns = tiers
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    (data / 1e3).plot.bar(ax=ax)
    ax.set_ylabel("max switch queuing (KB)")
    _figure(path, fig)
    return data.reset_index()


def timeseries(ts, path, series: str = "host_rx_gbps", names=None):
    """A time series from a run's `timeseries` table: host receive rate (Gb/s) or switch queued
    bytes over time, one line per host or switch in `names` (default: the 8 busiest)."""
    plt = _plt()
    d = ts[ts["series"] == series]
    if names is None:
        names = list(d.groupby("name")["value"].mean().sort_values(ascending=False).index[:8])
    d = d[d["name"].isin(names)]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, sub in d.groupby("name", observed=True):
        ax.plot(sub["time_ps"].astype("float64") / 1e9, sub["value"], label=str(name), lw=1)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("receive rate (Gb/s)" if series == "host_rx_gbps" else "queued bytes")
    ax.legend(fontsize=7)
    _figure(path, fig)
    return d.reset_index(drop=True)
