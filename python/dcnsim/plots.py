"""Plots of a run's results (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional


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
        unfinished = f"\n+{g['unfinished']} unfin." if g.get("unfinished") else ""
        ax.text(g["x"], 0.98, f"{g['group']}\nn={g['count']}{unfinished}", transform=top, ha="center", va="top",
                fontsize=7)
    for g in summary["slowdown_by_size"][1:]:
        ax.axvline(g["min_bytes"], color="grey", lw=0.6, ls=":")  # group edges
    if not groups:
        ax.text(0.5, 0.5, "no counted flow finished", transform=ax.transAxes, ha="center")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_ticks(ax.yaxis)
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

def _figure(path, fig, pdf: bool = True, layout: bool = True):
    p = Path(path)
    if layout:
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


def _plain_ticks(axis) -> None:
    """Slowdown ticks as plain numbers (1.005, 20), not 1.005 x 10^0, on a log axis."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        """matplotlib's choice of which ticks to label (minor ones only over a narrow range), as
        plain numbers with enough digits to tell neighbouring ticks apart."""

        def _pprint_val(self, x, d):
            return f"{x:.6g}"

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(2, 0.4)))


def _note(text: str, width: int = 80) -> str:
    """A figure note wrapped to fit above the axes."""
    import textwrap

    return textwrap.fill(text, width)


def _done(df):
    return df[df["status"] == "done"]


def axis_columns(df) -> list:
    """The sweep axes among a results table's columns (dcnsim.results records them)."""
    return [a for a in df.attrs.get("axes", []) if a in df.columns]


def _hashable(v):
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


def varying(df, within: Optional[str] = None) -> list:
    """Axes whose value differs between runs of `df` (with `within`: between runs that share that
    column's value, so an axis that only restates it, such as transport.protocol for protocol, is out)."""
    groups = [g for _, g in df.groupby(within, dropna=False)] if within else [df]
    return [a for a in axis_columns(df) if a != within
            and any(g[a].map(_hashable).nunique() > 1 for g in groups)]


def _short(df, col, v) -> str:
    """An axis value for a label: itself, or `#i` (its rank among the column's values) if it is a table or list."""
    if isinstance(v, (list, dict)):
        distinct = list(dict.fromkeys(df[col].map(repr)))
        return f"#{distinct.index(repr(v))}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def run_labels(df, columns=None) -> dict:
    """One distinct label per run (key -> label): the given columns, or the protocol and every axis
    that varies; runs that would still look alike get their key appended, so no run is hidden."""
    cols = list(columns) if columns else ["protocol"] + varying(df, within="protocol")
    labels = {}
    for _, r in df.iterrows():
        parts = [_short(df, c, r[c]) if c == "protocol" and not columns else f"{c}={_short(df, c, r[c])}" for c in cols]
        labels[r["key"]] = " ".join(parts) or r["key"]
    counts: Dict[str, int] = {}
    for v in labels.values():
        counts[v] = counts.get(v, 0) + 1
    return {k: (f"{v} [{k[:6]}]" if counts[v] > 1 else v) for k, v in labels.items()}


def _aggregation_note(done, by: str) -> str:
    """What one point of a per-`by` series stands for."""
    sizes = done.groupby(by).size()
    if (sizes == 1).all():
        return "one run per series"
    over = varying(done, within=by)
    return (f"each point: mean over {sizes.min()}-{sizes.max()} runs" if sizes.min() != sizes.max()
            else f"each point: mean over {sizes.iloc[0]} runs") + (f" (varying: {', '.join(over)})" if over else "") \
        + "; bars: min to max"


def _unfinished_note(done) -> str:
    """The counted flows that slowdown figures leave out (unfinished when their runs ended)."""
    n = int(done["slowdown_unfinished"].fillna(0).sum()) if "slowdown_unfinished" in done.columns else 0
    return f"; {n:,} counted flows unfinished, not in the slowdowns (survivorship bias)" if n else ""


def slowdown_by_group(df, path, by: str = "protocol"):
    """Median and p99 slowdown per flow-size group, one series per `by` value (SIRD Fig. 6 style).
    Where a series holds several runs (loads, seeds), each point is their mean and its bar spans
    their minimum to maximum; the figure says so. Returns the data drawn (with n, min, max)."""
    import pandas as pd

    plt = _plt()
    done = _done(df)
    groups = sorted({c.split("_")[1] for c in done.columns
                     if c.startswith("slowdown_") and c.endswith("_median") and len(c.split("_")) == 3})
    rows = []
    for name, sub in done.groupby(by):
        for g in groups:
            for stat in ("median", "p99"):
                v = sub[f"slowdown_{g}_{stat}"].astype(float)
                rows.append({by: name, "group": g, "label": sub[f"size_group_{g}"].iloc[0], "stat": stat,
                             "value": v.mean(), "min": v.min(), "max": v.max(), "n": int(v.notna().sum())})
    long = pd.DataFrame(rows, columns=[by, "group", "label", "stat", "value", "min", "max", "n"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.0), sharex=True)
    series = list(dict.fromkeys(long[by]))
    width = 0.8 / max(len(series), 1)
    for ax, stat in zip(axes, ["median", "p99"]):
        for i, name in enumerate(series):
            sub = long[(long[by] == name) & (long["stat"] == stat)]
            xs = [groups.index(g) + (i - (len(series) - 1) / 2) * width for g in sub["group"]]
            err = [sub["value"] - sub["min"], sub["max"] - sub["value"]]
            ax.errorbar(xs, sub["value"], yerr=err, marker="o", ls="", capsize=2, label=str(name))
        ax.set_yscale("log")
        _plain_ticks(ax.yaxis)
        ax.set_title(f"{stat} slowdown", fontsize=10)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_xlabel("flow size group")
    axes[0].set_ylabel("slowdown")
    axes[1].legend(title=by, fontsize=8)
    spans = {g: long[long["group"] == g]["label"].iloc[0] for g in groups}
    fig.suptitle(_note(_aggregation_note(done, by) + _unfinished_note(done), 120), fontsize=8)
    fig.text(0.5, 0.01, "   ".join(f"{g}: {spans[g]}" for g in groups), ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    _figure(path, fig, layout=False)
    data = long.pivot_table(index=[by, "group", "label"], columns="stat", values=["value", "min", "max", "n"])
    data.columns = [stat if v == "value" else f"{stat}_{v}" for v, stat in data.columns]
    return data.reset_index()


def queue_vs_goodput(df, path, by: str = "protocol", tier: str = "edge", along=None):
    """Maximum switch queuing (summed over a switch's ports) against goodput, every run a point
    (SIRD Fig. 5). Lines join the runs of one `by` value that differ only in the `along` axis
    (default: an axis whose name holds "load", else the first varying one), so runs of other seeds
    or settings are never joined into one zig-zag. Returns the data drawn (one row per run)."""
    import pandas as pd

    plt = _plt()
    done = _done(df).copy()
    col = f"max_switch_bytes_{tier}" if f"max_switch_bytes_{tier}" in done else "max_switch_bytes"
    rest = varying(done, within=by)
    if along is None:
        numeric = [a for a in rest if pd.api.types.is_numeric_dtype(done[a])]
        along = next((a for a in numeric if "load" in a), numeric[0] if numeric else None)
    lines = [a for a in rest if a != along]
    keep = ["key", by] + ([along] if along else []) + lines
    data = done[keep + ["goodput_gbps", col]].rename(columns={col: "max_queue_bytes"})
    for a in lines:  # tables and lists (zipped axes) as short, sortable names
        data[a] = data[a].map(lambda v, a=a: _short(done, a, v))
    data["line"] = data[lines].apply(lambda r: ", ".join(f"{a}={r[a]}" for a in lines), axis=1) if lines else ""
    data = data.sort_values([by, "line", along or "goodput_gbps"])
    fig, ax = plt.subplots(figsize=(6, 4.2))
    colors: Dict[str, str] = {}
    for (name, line), sub in data.groupby([by, "line"], sort=False):
        c = colors.setdefault(name, f"C{len(colors) % 10}")
        ax.plot(sub["goodput_gbps"], sub["max_queue_bytes"] / 1e6, marker="o", color=c, alpha=0.85,
                label=str(name) if line == data[data[by] == name]["line"].iloc[0] else None)
    ax.set_xlabel("goodput (Gb/s)")
    ax.set_ylabel(f"max {tier} switch queuing (MB)")
    ax.legend(title=by, fontsize=8)
    note = f"one point per run ({len(data)})"
    if along:
        note += f"; lines along {along}"
    if lines:
        note += f", one per {by} x {', '.join(lines)}"
    ax.set_title(_note(note), fontsize=8)
    _figure(path, fig)
    return data.reset_index(drop=True)


def fct_cdf(flows_by_label: dict, path):
    """CDF of flow completion times, one curve per entry (a run: label it with run_labels, so
    no two runs share a curve). Flows that did not finish are left out; the legend counts them."""
    import numpy as np
    import pandas as pd

    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    rows = []
    for label, flows in flows_by_label.items():
        f = flows[flows["fct_ps"].notna()]
        x = np.sort(f["fct_ps"].astype("float64").to_numpy() / 1e6)
        y = np.arange(1, len(x) + 1) / max(len(x), 1)
        unfinished = len(flows) - len(f)
        ax.plot(x, y, label=f"{label}" + (f" ({unfinished} unfinished)" if unfinished else ""))
        rows.append(pd.DataFrame({"label": label, "fct_us": x, "cdf": y}))
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("CDF (finished flows)")
    ax.set_title(f"one curve per run ({len(flows_by_label)})", fontsize=8)
    ax.legend(fontsize=7)
    _figure(path, fig)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["label", "fct_us", "cdf"])


def sorted_throughput(flows_by_label: dict, window_ps_by_label: dict, path):
    """Per-flow throughput over the measurement window, sorted (NDP Fig. 14), one curve per entry
    (a run)."""
    import numpy as np
    import pandas as pd

    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    rows = []
    for label, flows in flows_by_label.items():
        secs = window_ps_by_label[label] / 1e12
        t = np.sort(flows["window_bytes"].astype("float64").to_numpy() * 8 / secs / 1e9)
        ax.plot(np.arange(len(t)), t, label=str(label))
        rows.append(pd.DataFrame({"label": label, "rank": np.arange(len(t)), "gbps": t}))
    ax.set_xlabel("flow rank")
    ax.set_ylabel("throughput in the measurement window (Gb/s)")
    ax.set_title(f"one curve per run ({len(flows_by_label)})", fontsize=8)
    ax.legend(fontsize=7)
    _figure(path, fig)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["label", "rank", "gbps"])


def queue_by_tier(df, path, by: str = "protocol"):
    """Maximum switch queuing per tier, per `by` value (bars): the maximum over the runs of each
    `by` value, as the title says."""
    plt = _plt()
    done = _done(df)
    tiers = [c[len("max_switch_bytes_"):] for c in done.columns if c.startswith("max_switch_bytes_")]
    data = done.groupby(by)[[f"max_switch_bytes_{t}" for t in tiers]].max()
    data.columns = tiers
    runs = done.groupby(by).size()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    (data / 1e3).plot.bar(ax=ax)
    ax.set_ylabel("max switch queuing (KB)")
    ax.set_title(_note("one run per bar group" if (runs == 1).all()
                       else f"each bar: max over the {runs.min()}-{runs.max()} runs of its {by}"), fontsize=8)
    _figure(path, fig)
    return data.reset_index()


def timeseries(ts, path, series: str = "host_rx_gbps", names=None, title: str = ""):
    """A time series from a run's `timeseries` table: host receive rate (Gb/s) or switch queued
    bytes over time, one line per host or switch in `names` (default: the 8 busiest; the title
    says how many were left out)."""
    plt = _plt()
    d = ts[ts["series"] == series]
    total = d["name"].nunique()
    if names is None:
        names = list(d.groupby("name", observed=True)["value"].mean().sort_values(ascending=False).index[:8])
    d = d[d["name"].isin(names)]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, sub in d.groupby("name", observed=True):
        ax.plot(sub["time_ps"].astype("float64") / 1e9, sub["value"], label=str(name), lw=1)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("receive rate (Gb/s)" if series == "host_rx_gbps" else "queued bytes")
    shown = d["name"].nunique()
    what = "hosts" if series == "host_rx_gbps" else "switches"
    note = f"all {total} {what}" if shown == total else f"the {shown} busiest of {total} {what}"
    ax.set_title(_note(f"{title}: {note}" if title else note), fontsize=8)
    ax.legend(fontsize=7)
    _figure(path, fig)
    return d.reset_index(drop=True)
