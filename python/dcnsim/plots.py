"""Plots of a run's results and of a sweep's results table (matplotlib, headless).

Every plot function returns its matplotlib Figure. Given `ax=` (an Axes of the caller's figure, as
in a notebook) it draws there; otherwise it makes a figure of its own. Given a `path` it also
saves the figure there (a .png gets a .pdf beside it). What a plot draws is a table of its own:
the `*_data` functions return it, so callers and tests can check a figure against the results.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

PathLike = Union[str, Path]

#: How legends spell the protocols (anything else is shown as it is).
PROTOCOL_NAMES = {
    "dctcp": "DCTCP", "newreno": "NewReno", "ndp": "NDP", "phost": "pHost", "sird": "SIRD", "swift": "Swift",
    "dcqcn": "DCQCN", "timely": "TIMELY", "dctcp_rate": "DCTCP (rate)", "hpcc": "HPCC", "rcp": "RCP", "dx": "DX",
    "hull": "HULL", "dart": "DART", "expresspass": "ExpressPass", "homa": "Homa", "dcpim": "dcPIM",
    "mptcp": "MPTCP",
}

#: Unit suffixes of parameter names, and how a label writes them after the value.
UNITS = {"us": "us", "ms": "ms", "ps": "ps", "gbps": "Gb/s", "bytes": "B", "packets": "packets", "kb": "KB",
         "mb": "MB"}


def protocol_name(protocol: Any) -> str:
    """A protocol as legends spell it: `dctcp` -> `DCTCP`; other values as they are."""
    return PROTOCOL_NAMES.get(protocol, str(protocol)) if isinstance(protocol, str) else str(protocol)


def new_figure(*args: Any, figsize: Optional[Tuple[float, float]] = None, **kwargs: Any) -> Tuple[Figure, Any]:
    """A figure on the Agg canvas and its axes (`Figure.subplots(*args, **kwargs)`), without pyplot:
    drawing needs no display and never switches the caller's backend (a notebook keeps its inline
    plots), and nothing stays registered."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(*args, **kwargs)


def figure_for(ax: Optional[Axes], figsize: Tuple[float, float]) -> Tuple[Figure, Axes]:
    """The caller's Axes and its figure, or a new figure of `figsize` with one Axes."""
    from matplotlib.figure import Figure

    if ax is None:
        return new_figure(figsize=figsize)
    fig = ax.figure  # a SubFigure's figure is the one that draws and saves
    return (fig if isinstance(fig, Figure) else fig.figure), ax


def save_figure(path: PathLike, fig: Figure, pdf: bool = True, layout: bool = True) -> Path:
    """Saves `fig` to `path` (and, for a .png with `pdf`, a .pdf beside it); `layout` tightens it first."""
    p = Path(path)
    if layout:
        fig.tight_layout()
    fig.savefig(p, dpi=120)
    if pdf and p.suffix.lower() == ".png":
        fig.savefig(p.with_suffix(".pdf"))
    return p


def finish(fig: Figure, path: Optional[PathLike], own: bool, pdf: bool = True) -> Figure:
    """Saves a plot's figure when a path is given; the layout is only tightened on a figure the plot made."""
    if path is not None:
        save_figure(path, fig, pdf=pdf, layout=own)
    return fig


def plain_ticks(axis: Axis) -> None:
    """Slowdown ticks as plain numbers (1.005, 20), not 1.005 x 10^0, on a log axis."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        """matplotlib's choice of which ticks to label (minor ones only over a narrow range), as
        plain numbers with enough digits to tell neighbouring ticks apart."""

        def _pprint_val(self, x: float, d: float) -> str:
            return f"{x:.6g}"

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(2, 0.4)))


def wrap_note(text: str, width: int = 80) -> str:
    """A figure note wrapped to fit above the axes."""
    return textwrap.fill(text, width)


# One run: the slowdown by flow size of dcnsim.run's result.

def size_group_spans(summary: Mapping[str, Any], flows: pd.DataFrame) -> List[dict]:
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


def _group_letters(ax: Axes, summary: Mapping[str, Any], groups: List[dict]) -> None:
    """Group letters and flow counts along the top (x in data, y in axes coordinates); the dotted
    lines are the group edges, and the letters match the CLI summary."""
    top = ax.get_xaxis_transform()
    for g in groups:
        unfinished = f"\n+{g['unfinished']} unfin." if g.get("unfinished") else ""
        ax.text(g["x"], 0.98, f"{g['group']}\nn={g['count']}{unfinished}", transform=top, ha="center", va="top",
                fontsize=7)
    for g in summary["slowdown_by_size"][1:]:
        ax.axvline(g["min_bytes"], color="grey", lw=0.6, ls=":")
    if not groups:
        ax.text(0.5, 0.5, "no counted flow finished", transform=ax.transAxes, ha="center")


def slowdown_by_size(summary: Mapping[str, Any], flows: pd.DataFrame, path: Optional[PathLike] = None, *,
                     ax: Optional[Axes] = None) -> Figure:
    """Median and p99 slowdown per flow-size group against flow size (log x), as in the Homa and
    SIRD papers. Each group is a point at the median size of its flows, with a bar across the
    sizes they span; the groups are whatever summary["slowdown_by_size"] defines."""
    groups = size_group_spans(summary, flows)
    fig, ax = figure_for(ax, (7.2, 4.0))
    for stat, marker in (("median", "o"), ("p99", "s")):
        err = [[g["x"] - g["lo"] for g in groups], [g["hi"] - g["x"] for g in groups]]
        ax.errorbar([g["x"] for g in groups], [g[stat] for g in groups], xerr=err, marker=marker, capsize=3,
                    label=stat)
    _group_letters(ax, summary, groups)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_ticks(ax.yaxis)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("flow size (bytes)")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    title = summary.get("name") or "run"
    ax.set_title(f"{title}: {protocol_name(summary.get('protocol'))} slowdown by flow size", loc="left")
    # Above the axes, so it never hides a point or a group label.
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False, borderaxespad=0.2)
    ax.set_ylim(top=ax.get_ylim()[1] * 2.5)  # headroom for the group names
    return finish(fig, path, own=True, pdf=False)


# A sweep's results table (dcnsim.results): which runs differ in what, and how to name them.

def done_runs(df: pd.DataFrame) -> pd.DataFrame:
    """The runs of a results table that finished."""
    return df[df["status"] == "done"]


def axis_columns(df: pd.DataFrame) -> List[str]:
    """The sweep axes among a results table's columns (dcnsim.results records them)."""
    return [a for a in df.attrs.get("axes", []) if a in df.columns]


def hashable(v: Any) -> Any:
    """An axis value that can be grouped and counted: itself, or its repr for a table or list (a zipped axis)."""
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


def varying(df: pd.DataFrame, within: Optional[str] = None) -> List[str]:
    """Axes whose value differs between runs of `df` (with `within`: between runs that share that
    column's value, so an axis that only restates it, such as transport.protocol for protocol, is out)."""
    groups = [g for _, g in df.groupby(within, dropna=False)] if within else [df]
    return [a for a in axis_columns(df) if a != within
            and any(g[a].map(hashable).nunique() > 1 for g in groups)]


def short_value(df: pd.DataFrame, col: str, v: Any) -> str:
    """An axis value for a label: itself, or `#i` (its rank among the column's values) if it is a table or list."""
    if isinstance(v, (list, dict)):
        distinct = list(dict.fromkeys(df[col].map(repr)))
        return f"#{distinct.index(repr(v))}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _words(part: str) -> Tuple[str, str]:
    """A parameter name in words and its unit: `ecn_k_packets` -> (`ecn k`, `packets`)."""
    name, _, unit = part.rpartition("_")
    if name and unit in UNITS:
        return name.replace("_", " "), UNITS[unit]
    return part.replace("_", " "), ""


def axis_words(columns: Sequence[str]) -> Dict[str, Tuple[str, str]]:
    """Each axis in words and its unit for a label: its last key (`workload[0].load` -> `load`), or
    the whole path in words where two axes share their last key (`workload 1 load`)."""
    def last(c: str) -> str:
        return c.split(".")[-1].split("[")[0]

    def whole(c: str) -> str:
        return " ".join(p for p in c.replace("[", ".").replace("]", "").replace(",", ".").split(".") if p)

    lasts = [last(c) for c in columns]
    out = {}
    for c, word in zip(columns, lasts):
        name, unit = _words(word if lasts.count(word) == 1 else whole(c))
        out[c] = (name, unit)
    return out


def _label(df: pd.DataFrame, row: Any, cols: List[str], words: Dict[str, Tuple[str, str]]) -> str:
    """`DCTCP, load 0.3`: the protocol's name, then each axis in words with its value."""
    parts = []
    for c in cols:
        if c == "protocol":
            parts.append(protocol_name(row[c]))
            continue
        name, unit = words[c]
        parts.append(" ".join(p for p in (name, short_value(df, c, row[c]), unit) if p))
    return ", ".join(parts)


def run_labels(df: pd.DataFrame, columns: Optional[Sequence[str]] = None) -> Dict[str, str]:
    """One distinct label per run (key -> label, e.g. `DCTCP, load 0.3`): the given columns, or the
    protocol and every axis that varies. Runs that would still look alike are numbered (`run 2 of 3`,
    in table order), so no run is hidden."""
    cols = list(columns) if columns else ["protocol"] + varying(df, within="protocol")
    words = axis_words([c for c in cols if c != "protocol"])
    labels = {r["key"]: _label(df, r, cols, words) or str(r["key"]) for _, r in df.iterrows()}
    counts: Dict[str, int] = {}
    for v in labels.values():
        counts[v] = counts.get(v, 0) + 1
    seen: Dict[str, int] = {}
    for k, v in labels.items():
        if counts[v] > 1:
            seen[v] = seen.get(v, 0) + 1
            labels[k] = f"{v}, run {seen[v]} of {counts[v]}"
    return labels


def series_name(by: str, value: Any) -> str:
    """A `by` value as a legend entry: protocols by their names, anything else as it is."""
    return protocol_name(value) if by == "protocol" else str(value)


def aggregation_note(done: pd.DataFrame, by: str) -> str:
    """What one point of a per-`by` series stands for."""
    sizes = done.groupby(by).size()
    if (sizes == 1).all():
        return "one run per series"
    over = varying(done, within=by)
    return (f"each point: mean over {sizes.min()}-{sizes.max()} runs" if sizes.min() != sizes.max()
            else f"each point: mean over {sizes.iloc[0]} runs") + (f" (varying: {', '.join(over)})" if over else "") \
        + "; bars: min to max"


def unfinished_note(done: pd.DataFrame) -> str:
    """The counted flows that slowdown figures leave out (unfinished when their runs ended)."""
    n = int(done["slowdown_unfinished"].fillna(0).sum()) if "slowdown_unfinished" in done.columns else 0
    return f"; {n:,} counted flows unfinished, not in the slowdowns (survivorship bias)" if n else ""


# Standard plots over a sweep's results table.

def _size_groups(done: pd.DataFrame) -> List[str]:
    """The flow-size group letters a results table has slowdown columns for."""
    return sorted({c.split("_")[1] for c in done.columns
                   if c.startswith("slowdown_") and c.endswith("_median") and len(c.split("_")) == 3})


def _group_rows(done: pd.DataFrame, by: str) -> pd.DataFrame:
    """Mean, min, max and count of each size group's median and p99 slowdown, per `by` value (long form)."""
    import pandas as pd

    rows = []
    for name, sub in done.groupby(by):
        for g in _size_groups(done):
            for stat in ("median", "p99"):
                v = sub[f"slowdown_{g}_{stat}"].astype(float)
                rows.append({by: name, "group": g, "label": sub[f"size_group_{g}"].iloc[0], "stat": stat,
                             "value": v.mean(), "min": v.min(), "max": v.max(), "n": int(v.notna().sum())})
    return pd.DataFrame(rows, columns=[by, "group", "label", "stat", "value", "min", "max", "n"])


def slowdown_by_group_data(df: pd.DataFrame, by: str = "protocol") -> pd.DataFrame:
    """What slowdown_by_group draws: per `by` value and size group, the mean median and p99
    slowdown over the runs (`median`, `p99`) with their min, max and run count (`median_min`, ...)."""
    long = _group_rows(done_runs(df), by)
    data = long.pivot_table(index=[by, "group", "label"], columns="stat", values=["value", "min", "max", "n"])
    data.columns = [stat if v == "value" else f"{stat}_{v}" for v, stat in data.columns]
    return data.reset_index()


def _slowdown_panel(ax: Axes, long: pd.DataFrame, by: str, stat: str, groups: List[str]) -> None:
    """One stat's points, one series per `by` value, side by side within each size group."""
    series = list(dict.fromkeys(long[by]))
    width = 0.8 / max(len(series), 1)
    for i, name in enumerate(series):
        sub = long[(long[by] == name) & (long["stat"] == stat)]
        xs = [groups.index(g) + (i - (len(series) - 1) / 2) * width for g in sub["group"]]
        err = [sub["value"] - sub["min"], sub["max"] - sub["value"]]
        ax.errorbar(xs, sub["value"], yerr=err, marker="o", ls="", capsize=2, label=series_name(by, name))
    ax.set_yscale("log")
    plain_ticks(ax.yaxis)
    ax.set_title(f"{stat} slowdown", fontsize=10)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_xlabel("flow size group")


def slowdown_by_group(df: pd.DataFrame, path: Optional[PathLike] = None, by: str = "protocol", *,
                      ax: Optional[Sequence[Axes]] = None) -> Figure:
    """Median and p99 slowdown per flow-size group, one series per `by` value (SIRD Fig. 6 style),
    on two panels (`ax`: the caller's pair of Axes). Where a series holds several runs (loads,
    seeds), each point is their mean and its bar spans their minimum to maximum; on a figure of
    its own, a note above says so and one below gives the groups' size ranges."""
    done = done_runs(df)
    groups = _size_groups(done)
    long = _group_rows(done, by)
    own = ax is None
    fig, axes = new_figure(1, 2, figsize=(9, 4.0), sharex=True) if ax is None else (figure_for(ax[0], (9, 4))[0], ax)
    for panel, stat in zip(axes, ["median", "p99"]):
        _slowdown_panel(panel, long, by, stat, groups)
    axes[0].set_ylabel("slowdown")
    axes[1].legend(title=by, fontsize=8)
    if own:
        spans = {g: long[long["group"] == g]["label"].iloc[0] for g in groups}
        fig.suptitle(wrap_note(aggregation_note(done, by) + unfinished_note(done), 120), fontsize=8)
        fig.text(0.5, 0.01, "   ".join(f"{g}: {spans[g]}" for g in groups), ha="center", fontsize=8)
        fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    return finish(fig, path, own=False)


def _default_along(done: pd.DataFrame, rest: List[str]) -> Optional[str]:
    """The axis queue_vs_goodput joins runs along: one whose name holds "load", else the first numeric one."""
    import pandas as pd

    numeric = [a for a in rest if pd.api.types.is_numeric_dtype(done[a])]
    return next((a for a in numeric if "load" in a), numeric[0] if numeric else None)


def queue_vs_goodput_data(df: pd.DataFrame, by: str = "protocol", tier: str = "edge",
                          along: Optional[str] = None) -> pd.DataFrame:
    """What queue_vs_goodput draws, one row per run: key, `by`, the axes, goodput_gbps,
    max_queue_bytes and `line` (the other varying axes' values: the runs of one line)."""
    done = done_runs(df).copy()
    col = f"max_switch_bytes_{tier}" if f"max_switch_bytes_{tier}" in done else "max_switch_bytes"
    rest = varying(done, within=by)
    along = _default_along(done, rest) if along is None else along
    lines = [a for a in rest if a != along]
    keep = ["key", by] + ([along] if along else []) + lines
    data = done[keep + ["goodput_gbps", col]].rename(columns={col: "max_queue_bytes"})
    for a in lines:  # tables and lists (zipped axes) as short, sortable names
        data[a] = data[a].map(lambda v, a=a: short_value(done, a, v))
    words = axis_words(lines)
    data["line"] = data[lines].apply(
        lambda r: ", ".join(" ".join(p for p in (words[a][0], r[a], words[a][1]) if p) for a in lines),
        axis=1) if lines else ""
    data = data.sort_values([by, "line", along or "goodput_gbps"]).reset_index(drop=True)
    data.attrs["along"] = along
    return data


def queue_vs_goodput(df: pd.DataFrame, path: Optional[PathLike] = None, by: str = "protocol", tier: str = "edge",
                     along: Optional[str] = None, *, ax: Optional[Axes] = None) -> Figure:
    """Maximum switch queuing (summed over a switch's ports) against goodput, every run a point
    (SIRD Fig. 5). Lines join the runs of one `by` value that differ only in the `along` axis
    (default: an axis whose name holds "load", else the first varying one), so runs of other seeds
    or settings are never joined into one zig-zag."""
    data = queue_vs_goodput_data(df, by, tier, along)
    along = data.attrs["along"]
    own = ax is None
    fig, ax = figure_for(ax, (6, 4.2))
    colors: Dict[str, str] = {}
    for (name, line), sub in data.groupby([by, "line"], sort=False):
        c = colors.setdefault(name, f"C{len(colors) % 10}")
        first = line == data[data[by] == name]["line"].iloc[0]
        ax.plot(sub["goodput_gbps"], sub["max_queue_bytes"] / 1e6, marker="o", color=c, alpha=0.85,
                label=series_name(by, name) if first else None)
    ax.set_xlabel("goodput (Gb/s)")
    ax.set_ylabel(f"max {tier} switch queuing (MB)")
    ax.legend(title=by, fontsize=8)
    lines = [a for a in varying(done_runs(df), within=by) if a != along]
    note = f"one point per run ({len(data)})"
    if along:
        note += f"; lines along {axis_words([along])[along][0]}"
    if lines:
        note += f", one per {by} x {', '.join(name for name, _ in axis_words(lines).values())}"
    ax.set_title(wrap_note(note), fontsize=8)
    return finish(fig, path, own)


def fct_cdf_data(flows_by_label: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """What fct_cdf draws: label, fct_us and cdf of every finished flow, sorted per label."""
    import numpy as np
    import pandas as pd

    rows = []
    for label, flows in flows_by_label.items():
        f = flows[flows["fct_ps"].notna()]
        x = np.sort(f["fct_ps"].astype("float64").to_numpy() / 1e6)
        rows.append(pd.DataFrame({"label": label, "fct_us": x, "cdf": np.arange(1, len(x) + 1) / max(len(x), 1)}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["label", "fct_us", "cdf"])


def fct_cdf(flows_by_label: Mapping[str, pd.DataFrame], path: Optional[PathLike] = None, *,
            ax: Optional[Axes] = None) -> Figure:
    """CDF of flow completion times, one curve per entry (a run: label it with run_labels, so
    no two runs share a curve). Flows that did not finish are left out; the legend counts them."""
    data = fct_cdf_data(flows_by_label)
    own = ax is None
    fig, ax = figure_for(ax, (6, 4.2))
    for label, flows in flows_by_label.items():
        sub = data[data["label"] == label]
        unfinished = len(flows) - len(sub)
        ax.plot(sub["fct_us"], sub["cdf"], label=f"{label}" + (f" ({unfinished} unfinished)" if unfinished else ""))
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("CDF (finished flows)")
    ax.set_title(f"one curve per run ({len(flows_by_label)})", fontsize=8)
    ax.legend(fontsize=7)
    return finish(fig, path, own)


def sorted_throughput_data(flows_by_label: Mapping[str, pd.DataFrame],
                           window_ps_by_label: Mapping[str, float]) -> pd.DataFrame:
    """What sorted_throughput draws: label, rank and gbps (throughput in the measurement window),
    slowest flow first, per label."""
    import numpy as np
    import pandas as pd

    rows = []
    for label, flows in flows_by_label.items():
        secs = window_ps_by_label[label] / 1e12
        t = np.sort(flows["window_bytes"].astype("float64").to_numpy() * 8 / secs / 1e9)
        rows.append(pd.DataFrame({"label": label, "rank": np.arange(len(t)), "gbps": t}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["label", "rank", "gbps"])


def sorted_throughput(flows_by_label: Mapping[str, pd.DataFrame], window_ps_by_label: Mapping[str, float],
                      path: Optional[PathLike] = None, *, ax: Optional[Axes] = None) -> Figure:
    """Per-flow throughput over the measurement window, sorted (NDP Fig. 14), one curve per entry
    (a run)."""
    data = sorted_throughput_data(flows_by_label, window_ps_by_label)
    own = ax is None
    fig, ax = figure_for(ax, (6, 4.2))
    for label in flows_by_label:
        sub = data[data["label"] == label]
        ax.plot(sub["rank"], sub["gbps"], label=str(label))
    ax.set_xlabel("flow rank")
    ax.set_ylabel("throughput in the measurement window (Gb/s)")
    ax.set_title(f"one curve per run ({len(flows_by_label)})", fontsize=8)
    ax.legend(fontsize=7)
    return finish(fig, path, own)


def queue_by_tier_data(df: pd.DataFrame, by: str = "protocol") -> pd.DataFrame:
    """What queue_by_tier draws: per `by` value, the maximum switch queuing (bytes) of each tier over its runs."""
    done = done_runs(df)
    tiers = [c[len("max_switch_bytes_"):] for c in done.columns if c.startswith("max_switch_bytes_")]
    data = done.groupby(by)[[f"max_switch_bytes_{t}" for t in tiers]].max()
    data.columns = tiers
    return data.reset_index()


def queue_by_tier(df: pd.DataFrame, path: Optional[PathLike] = None, by: str = "protocol", *,
                  ax: Optional[Axes] = None) -> Figure:
    """Maximum switch queuing per tier, per `by` value (bars): the maximum over the runs of each
    `by` value, as the title says."""
    data = queue_by_tier_data(df, by)
    runs = done_runs(df).groupby(by).size()
    own = ax is None
    fig, ax = figure_for(ax, (6, 4.2))
    bars = data.set_index(by)
    bars.index = [series_name(by, v) for v in bars.index]
    (bars / 1e3).plot.bar(ax=ax)
    ax.set_xlabel(by)
    ax.set_ylabel("max switch queuing (KB)")
    ax.set_title(wrap_note("one run per bar group" if (runs == 1).all()
                           else f"each bar: max over the {runs.min()}-{runs.max()} runs of its {by}"), fontsize=8)
    return finish(fig, path, own)


def timeseries_data(ts: pd.DataFrame, series: str = "host_rx_gbps",
                    names: Optional[Sequence[str]] = None) -> pd.DataFrame:
    """What timeseries draws: the rows of `series` for the hosts or switches in `names` (default:
    the 8 busiest); attrs["total"] counts the hosts or switches the series has."""
    d = ts[ts["series"] == series]
    total = d["name"].nunique()
    if names is None:
        names = list(d.groupby("name", observed=True)["value"].mean().sort_values(ascending=False).index[:8])
    d = d[d["name"].isin(names)].reset_index(drop=True)
    d.attrs["total"] = total
    return d


def timeseries(ts: pd.DataFrame, path: Optional[PathLike] = None, series: str = "host_rx_gbps",
               names: Optional[Sequence[str]] = None, title: str = "", *, ax: Optional[Axes] = None) -> Figure:
    """A time series from a run's `timeseries` table: host receive rate (Gb/s) or switch queued
    bytes over time, one line per host or switch in `names` (default: the 8 busiest; the title
    says how many were left out). `title` (a run's label) heads the title."""
    d = timeseries_data(ts, series, names)
    own = ax is None
    fig, ax = figure_for(ax, (6, 3.6))
    for name, sub in d.groupby("name", observed=True):
        ax.plot(sub["time_ps"].astype("float64") / 1e9, sub["value"], label=str(name), lw=1)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("receive rate (Gb/s)" if series == "host_rx_gbps" else "queued bytes")
    shown, total = d["name"].nunique(), d.attrs["total"]
    what = "hosts" if series == "host_rx_gbps" else "switches"
    note = f"all {total} {what}" if shown == total else f"the {shown} busiest of {total} {what}"
    ax.set_title(wrap_note(f"{title}: {note}" if title else note), fontsize=8)
    ax.legend(fontsize=7)
    return finish(fig, path, own)
