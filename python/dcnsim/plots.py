"""Plots of a run's results (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path


def size_group_spans(summary: dict, flows) -> list:
    """Where each of the summary's flow-size groups sits on a size axis: per group (a dict from
    summary["slowdown_by_size"] with `x`, `lo`, `hi` added), the median, smallest and largest
    size of the flows it counts (counted, finished, min_bytes <= size < max_bytes). Groups with
    no such flow are left out: the summary has no slowdown for them."""
    import numpy as np

    done = flows["counted"].to_numpy(dtype=bool) & flows["slowdown"].notna().to_numpy()
    sizes = flows["size_bytes"].to_numpy(dtype=np.float64)[done]
    out = []
    for g in summary["slowdown_by_size"]:
        upper = np.inf if g["max_bytes"] is None else g["max_bytes"]
        s = sizes[(sizes >= g["min_bytes"]) & (sizes < upper)]
        if len(s):
            out.append(dict(g, x=float(np.median(s)), lo=float(s.min()), hi=float(s.max())))
    return out


def slowdown_by_size(summary: dict, flows, path) -> Path:
    """Median and p99 slowdown per flow-size group against flow size (log x), as in the Homa and
    SIRD papers. Each group is a point at the median size of its flows, with a bar across the
    sizes they span; the groups are whatever summary["slowdown_by_size"] defines."""
    plt = _plt()
    groups = size_group_spans(summary, flows)
    fig, ax = plt.subplots(figsize=(7.2, 4.0))
    for stat, marker in (("median", "o"), ("p99", "s")):
        xs = [g["x"] for g in groups]
        ys = [g[stat] for g in groups]
        err = [[g["x"] - g["lo"] for g in groups], [g["hi"] - g["x"] for g in groups]]
        ax.errorbar(xs, ys, xerr=err, marker=marker, capsize=3, label=stat)
    # Group letters and flow counts along the top (x in data, y in axes coordinates); the dotted
    # lines are the group edges, and the letters match the CLI summary.
    top = ax.get_xaxis_transform()
    for g in groups:
        ax.text(g["x"], 0.98, f"{g['group']}\nn={g['count']}", transform=top, ha="center", va="top", fontsize=7)
    for g in summary["slowdown_by_size"][1:]:
        ax.axvline(g["min_bytes"], color="grey", lw=0.6, ls=":")  # group edges
    if not groups:
        ax.text(0.5, 0.5, "no counted flow finished", transform=ax.transAxes, ha="center")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("flow size (bytes)")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    title = summary.get("name") or "run"
    ax.set_title(f"{title}: {summary.get('protocol')} slowdown by flow size", loc="left")
    # Above the axes, so it never hides a point or a group label.
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False, borderaxespad=0.2)
    ax.set_ylim(top=ax.get_ylim()[1] * 2.5)  # headroom for the group names
    return _figure(path, fig, pdf=False)


# Standard plots over a sweep's results table (dcnsim.results). Each returns the data it drew, so
# callers and tests can check the figure against the table.

def _figure(path, fig, pdf: bool = True):
    p = Path(path)
    fig.tight_layout()
    fig.savefig(p, dpi=120)
    if pdf and p.suffix.lower() == ".png":
        fig.savefig(p.with_suffix(".pdf"))
    return p


class _Figures:
    """Figures on the Agg canvas without pyplot: drawing needs no display and never switches
    the caller's backend (a notebook keeps its inline plots), and nothing stays registered."""

    @staticmethod
    def subplots(*args, figsize=None, **kwargs):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize)
        FigureCanvasAgg(fig)
        return fig, fig.subplots(*args, **kwargs)


def _plt():
    return _Figures


def slowdown_by_group(df, path, by: str = "protocol"):
    """Median and p99 slowdown per flow-size group, one series per `by` value (SIRD Fig. 6 style)."""
    import pandas as pd

    plt = _plt()
    done = df[df["status"] == "done"]
    groups = sorted({c.split("_")[1] for c in done.columns
                     if c.startswith("slowdown_") and c.endswith("_median") and len(c.split("_")) == 3})
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
