"""SIRD paper Tables 4 and 5 and Figures 4, 5 and 6: every protocol of sird_common.SETUPS this build has, on
the 144-host leaf-spine, three workloads x three configurations x loads 25-95%. Reports the max
goodput and max ToR queuing across loads and the p99 slowdown at 50% load beside the paper's."""

from typing import Dict, Optional, Tuple

from ..sweep.spec import SweepSpec
from . import sird_common as sc
from .base import NONNEGATIVE, SLOWDOWN, NotRun, Repro, at_most, paper_value_or_at_most
from .common import table

QUICK_LOADS = [0.5, 0.8]
# The order the runs are made in (a partial sweep keeps what it finished): 50% load first (the p99
# column), then the high loads where max goodput and max queuing are reached, then the rest.
LOAD_PRIORITY = [0.5, 0.95, 0.9, 0.8, 0.85, 0.7, 0.6, 0.25]


def runs(quick: bool) -> list:
    """(protocol, cell spec) for every protocol, cell and load, in LOAD_PRIORITY order."""
    loads = QUICK_LOADS if quick else sorted(sc.LOADS, key=LOAD_PRIORITY.index)
    return [(p, sc.cell_spec(wk, cfg, load, quick)) for load in loads for p in sc.protocols()
            for cfg in sc.CONFIGS for wk in sc.WORKLOADS]


def build(quick: bool) -> SweepSpec:
    base = {**sc.cell_spec("WKa", "balanced", 0.5, quick), **sc.sird_setup()}
    # Summary-only runs: the tables need no per-flow rows, and a 24 ms WKa run has 7-14 M of them
    # (200-300 MB of Parquet each, some 30 GB for the table).
    return SweepSpec(base=base, axes=sc.ordered_axes(runs(quick)), name="sird-table5", flow_tables=False)


def _fig4(norm, path):
    """Normalized slowdown, goodput and queuing per protocol, one point per (workload, config)."""
    from ..plots import new_figure, save_figure

    protocols = sorted({p for p, _, _ in norm})
    fig, axes = new_figure(1, 3, figsize=(11, 3.4))
    panels = [("p99", "p99 slowdown @50%"), ("goodput", "max goodput"), ("queue_mb", "max ToR queuing")]
    for ax, (metric, title) in zip(axes, panels):
        for i, p in enumerate(protocols):
            ys = [v[metric] for (q, _, _), v in norm.items() if q == p]
            ax.scatter([i + 0.06 * (k - len(ys) / 2) for k in range(len(ys))], ys, s=18)
        ax.set_xticks(range(len(protocols)))
        ax.set_xticklabels(protocols)
        ax.set_title(f"normalized {title}")
        if metric != "goodput":
            ax.set_yscale("log")
    save_figure(path, fig)


def _grid(df, path, draw, ylabel):
    """A 3 x 3 grid: rows = configurations, columns = workloads."""
    from ..plots import new_figure, save_figure

    fig, axes = new_figure(3, 3, figsize=(11, 8.5))
    for r, cfg in enumerate(sc.CONFIGS):
        for c, wk in enumerate(sc.WORKLOADS):
            ax = axes[r][c]
            draw(ax, df[(df["config"] == cfg) & (df["workload_name"] == wk)])
            ax.set_title(f"{wk} {cfg}", fontsize=9)
            if c == 0:
                ax.set_ylabel(ylabel)
    axes[0][2].legend(fontsize=8)
    save_figure(path, fig)


def _fig5(df, path):
    """Max ToR queuing against goodput across loads (stable runs), per protocol."""
    def draw(ax, sub):
        for p, s in sub[sub["stable"]].sort_values("load").groupby("protocol"):
            ax.plot(s["goodput_per_host_gbps"], s["max_tor_mb"], marker="o", label=p)
        ax.set_yscale("log")
        ax.set_xlabel("goodput per host (Gb/s)", fontsize=8)
    _grid(df, path, draw, "max ToR queuing (MB)")


def _fig6(df, path):
    """Median (hollow) and p99 (filled) slowdown per size group at 50% load, per protocol."""
    groups = ["A", "B", "C", "D"]

    def draw(ax, sub):
        sub = sub[(sub["load"] - 0.5).abs() < 1e-9]
        protocols = sorted(sub["protocol"].unique())
        w = 0.8 / max(len(protocols), 1)
        for i, p in enumerate(protocols):
            row = sub[sub["protocol"] == p].iloc[0]
            xs = [g + i * w for g in range(len(groups) + 1)]
            p99 = [row.get(f"slowdown_{g}_p99") for g in groups] + [row["slowdown_p99"]]
            med = [row.get(f"slowdown_{g}_median") for g in groups] + [row["slowdown_median"]]
            ax.bar(xs, p99, width=w, label=p)
            ax.scatter(xs, med, marker="_", color="black", zorder=3)
        ax.set_xticks([g + 0.4 - w / 2 for g in range(len(groups) + 1)])
        ax.set_xticklabels(groups + ["all"])
        ax.set_yscale("log")
    _grid(df, path, draw, "slowdown (p99 bars, median ticks)")


def report(df, out: str) -> str:
    df = sc.annotate(df)
    t5 = sc.table5(df)
    norm = sc.normalized(t5)
    rows = []
    for p in sorted({p for p, _, _ in t5}):
        for wk, cfg in sc.PAPER_ORDER:
            v = t5.get((p, wk, cfg))
            if v is None:
                continue
            rows.append((p, wk, cfg,
                         sc.fmt(v["goodput"], 1), sc.fmt(sc.paper_value("goodput", p, wk, cfg), 1),
                         sc.fmt(v["queue_mb"]), sc.fmt(sc.paper_value("queue_mb", p, wk, cfg)),
                         sc.fmt(v["p99"]), sc.fmt(sc.paper_value("p99", p, wk, cfg)),
                         ",".join(f"{x:.2f}" for x in v["unstable"]) or "-", len(v["loads"])))
    t = table(rows, ["protocol", "wl", "config", "max goodput", "paper", "max ToR MB", "paper", "p99 @50%", "paper",
                     "unstable loads", "loads run"])
    nrows = [(p, wk, cfg, sc.fmt(v["goodput"]), sc.fmt(v["queue_mb"]), sc.fmt(v["p99"]))
             for (p, wk, cfg), v in sorted(norm.items())]
    n = table(nrows, ["protocol", "wl", "config", "goodput/best", "queuing/best", "p99/best"])
    _fig4(norm, f"{out}/sird_fig4.png")
    _fig5(df, f"{out}/sird_fig5.png")
    _fig6(df, f"{out}/sird_fig6.png")
    df.drop(columns=[c for c in df.columns if "," in c]).to_csv(f"{out}/sird_runs.csv", index=False)
    return ("SIRD Table 5 (goodput per host in Gb/s over loads; ToR queuing = max over ToRs of the sum over ports, "
            f"stable loads only; stable = delivered >= {sc.STABLE_DELIVERY:.0%} of what arrived in the window "
            "and queues not still growing)\n"
            + t + "\n\nTable 4 (normalized to the best protocol per cell)\n" + n
            + f"\n\nwrote {out}/sird_fig4.png, sird_fig5.png, sird_fig6.png, sird_runs.csv")


def _cell(metric, protocol, wk, cfg):
    """Our Table 5 number; NotRun when the runs it needs are not among the finished ones (a partial
    sweep): the cell's 50% run for p99, its 95% run for max goodput, any of its runs otherwise."""
    def measure(df, out):
        d = sc.annotate(df)
        d = d[(d["protocol"] == protocol) & (d["workload_name"] == wk) & (d["config"] == cfg)]

        def ran(load):
            return ((d["load"] - load).abs() < 1e-9).any()

        if d.empty or (metric == "p99" and not ran(0.5)):
            raise NotRun(f"{protocol} {wk} {cfg}" + (" at 50% load" if metric == "p99" else ""))
        if metric == "goodput" and not all(ran(x) for x in GOODPUT_LOADS):
            raise NotRun(f"{protocol} {wk} {cfg} at 95% load")
        return sc.table5(d)[(protocol, wk, cfg)][metric]
    return measure


# Which of the paper's Table 5 numbers `--check` compares with ours, as data: metric -> protocol ->
# (tolerance, relative, the configurations checked, tolerance in the quick variant or None = full
# variant only). Goodput is not checked at the quick length (see docs/protocols/sird.md). SIRD's
# quick p99 skips WKc: its quick runs are too short for WKc at 50% to settle.
ALL = sc.CONFIGS
#: metric -> protocol -> (tolerance, relative, the configs or cells checked, quick tolerance or None: full only)
TOLERANCES: Dict[str, Dict[str, Tuple[float, bool, Tuple[str, ...], Optional[float]]]] = {
    "p99": {"sird": (0.3, True, ALL, 0.5), "dctcp": (0.4, True, ("balanced",), None),
            "swift": (0.4, True, ("balanced",), None), "homa": (0.4, True, ("balanced",), None),
            "dcpim": (0.4, True, ("balanced",), None), "expresspass": (0.5, True, ALL, None)},
    "queue_mb": {"sird": (0.35, True, ALL, None), "expresspass": (0.2, False, ("WKb balanced",), None)},
    # Max goodput: checked once the highest load (95%) ran; the maximum over the loads run then
    # moves only for a protocol whose goodput falls between 90% and 95% of load.
    "goodput": {p: (0.15, True, ALL, None) for p in ("sird", "dctcp", "swift", "homa", "expresspass", "dcpim")},
}
GOODPUT_LOADS = (0.95,)
NAMES = {"sird": "SIRD", "dctcp": "DCTCP", "swift": "Swift", "homa": "Homa", "dcpim": "dcPIM",
         "expresspass": "ExpressPass"}
WHAT = {"p99": "p99 slowdown @50%", "queue_mb": "max ToR queuing (MB)", "goodput": "max goodput (Gb/s)"}


QUICK_REASON = "the quick runs last a few ms: a tail of fewer messages"


def _check(what: str, metric: str, paper: float, tol: float, measure, relative: bool, **kw):
    """The paper's number of the cell, or "at most" for a queue so small that its tolerance reaches zero
    (ExpressPass's near-empty queues)."""
    physical = SLOWDOWN if metric == "p99" else NONNEGATIVE
    if not relative and tol >= paper:
        return at_most(what, paper, measure, slack=tol, physical=physical, **kw,
                       claim=f"near-empty queues: Table 5's {paper} MB; ours at most {tol} MB above")
    return paper_value_or_at_most(what, paper, tol, measure, relative=relative, physical=physical,
                                  reason=sc.TABLE5_REASONS[metric], **kw)


def _checks():
    """One check per (metric, protocol, cell) of TOLERANCES whose paper value is a number (the
    paper's "unstable" cells have none)."""
    checks = []
    for metric, rows in TOLERANCES.items():
        for p, (tol, relative, where, quick_tol) in rows.items():
            for wk, cfg in sc.PAPER_ORDER:
                paper = sc.paper_value(metric, p, wk, cfg)
                if paper is None or (cfg not in where and f"{wk} {cfg}" not in where):
                    continue
                full_only = quick_tol is None or (metric == "p99" and p == "sird" and wk == "WKc")
                checks.append(_check(f"{NAMES[p]} {WHAT[metric]}, {wk} {cfg}", metric, paper, tol,
                                     _cell(metric, p, wk, cfg), relative=relative, quick_tolerance=quick_tol,
                                     quick_reason=QUICK_REASON if quick_tol else "", full_only=full_only))
    return checks


REPRO = Repro("sird-table5", "SIRD vs DCTCP, Swift and Homa: 3 workloads x 3 configs x loads",
              "SIRD Tables 4-5, Figs. 4-6", build, report, _checks())
