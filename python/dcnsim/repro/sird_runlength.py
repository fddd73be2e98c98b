"""How long the SIRD Table 5 runs must be: the Table 5 figures (max goodput, max ToR queuing, p99
slowdown at 50% load, the stability verdict) of a few informative cells as a function of run length,
the warm-up scaled with it (sird_common.WARMUP_FRACTION). A figure has converged at a length when it
and every longer run's are within CONVERGED of the longest run's.

The runs are the same specs sird-table5 builds at those lengths, so with one `--out` for both
(`dcnsim repro sird-runlength --out out/repro/sird` then `dcnsim repro sird-table5 --out
out/repro/sird`) the table reuses every run this entry made at its length."""

from __future__ import annotations

import math

from ..sweep.spec import SweepSpec
from . import sird_common as sc
from .base import NotRun, Repro, paper_value
from .common import table

# The heavy-tailed WKc (mean 2.5 MB) at the balanced configuration, and the small-message WKa under
# incast (DCTCP's "unstable" cell in the paper), each at 50% (the p99 column) and 90% (near max goodput).
CELLS = [("WKc", "balanced", 0.5), ("WKc", "balanced", 0.9), ("WKa", "incast", 0.5), ("WKa", "incast", 0.9)]
# WKa keeps ~0.5 M messages per simulated ms in its flow table: 24 ms is ~13 M flows.
LENGTHS_MS = {"WKa": [3.0, 6.0, 12.0, 24.0], "WKc": [5.0, 10.0, 20.0, 40.0, 80.0]}
QUICK_CELLS = [("WKa", "incast", 0.5), ("WKa", "incast", 0.9)]
QUICK_LENGTHS_MS = {"WKa": [0.25, 0.5, 1.0]}
# SIRD and DCTCP first (the local executor runs in order, so a partial sweep holds them), and the
# cheapest runs first: a simulated ms of WKa at 90% costs ~5x one of WKc (many more messages).
FIRST = ("sird", "dctcp")
COST_PER_MS = {"WKa": 5.0, "WKb": 2.0, "WKc": 1.0}
CONVERGED = 0.05


def runs(quick: bool) -> list:
    """(protocol, cell spec) in the order to run them: SIRD and DCTCP at every length, cheapest
    first, then the other protocols."""
    cells = QUICK_CELLS if quick else CELLS
    lengths = QUICK_LENGTHS_MS if quick else LENGTHS_MS
    have = sc.protocols()
    groups = [[p for p in FIRST if p in have]] + ([] if quick else [[p for p in have if p not in FIRST]])
    out = []
    for group in groups:
        sized = sorted(((COST_PER_MS[wk] * ms, ms, (wk, cfg, load)) for wk, cfg, load in cells for ms in lengths[wk]),
                       key=lambda t: (t[0], cells.index(t[2])))
        for _, ms, (wk, cfg, load) in sized:
            out += [(p, sc.cell_spec(wk, cfg, load, quick, length_ms=ms)) for p in group]
    return out


def build(quick: bool) -> SweepSpec:
    base = {**sc.cell_spec("WKa", "balanced", 0.5, quick), **sc.sird_setup()}
    # Summary-only, as sird-table5, whose longest runs it shares through one --out.
    return SweepSpec(base=base, axes=sc.ordered_axes(runs(quick)), name="sird-runlength", flow_tables=False)


def converged_at(lengths, values, tol: float = CONVERGED) -> float:
    """The shortest length from which on every value is within `tol` of the longest run's (NaN
    when the longest is missing or not a number)."""
    pairs = sorted(zip(lengths, values))
    last = pairs[-1][1] if pairs else math.nan
    if last is None or math.isnan(last):
        return math.nan
    at = pairs[-1][0]
    for length, v in reversed(pairs):
        if v is None or math.isnan(v) or abs(v - last) > tol * abs(last):
            break
        at = length
    return at


def frame(df):
    """Annotated runs with their run length (ms) and cell; one row per (protocol, cell, length)."""
    df = sc.annotate(df)
    df["length_ms"] = sc.axis_value(df, "duration_us").astype(float) / 1000.0
    df["cell"] = df["workload_name"] + " " + df["config"] + " " + df["load"].map(lambda x: f"{x:.2f}")
    return df


def figures(df):
    """The Table 5 figures of each (protocol, workload, configuration) at each run length, over the
    loads that ran at that length: max goodput, max ToR queuing over the stable loads, p99 slowdown
    at 50% load, the unstable loads, and delivered / arrived at the highest load (the stability test)."""
    rows = []
    for length, sub in df.groupby("length_ms"):
        for (p, wk, cfg), v in sc.table5(sub).items():
            cell = sub[(sub["protocol"] == p) & (sub["workload_name"] == wk) & (sub["config"] == cfg)]
            top = cell.sort_values("load").iloc[-1]
            rows.append({"protocol": p, "cell": f"{wk} {cfg}", "length_ms": length, "goodput": v["goodput"],
                         "queue_mb": v["queue_mb"], "p99": v["p99"], "unstable": v["unstable"],
                         "loads": v["loads"], "top_delivery": top["delivery"], "top_stable": bool(top["stable"]),
                         "wall_s": cell["wall_time_s"].sum()})
    import pandas as pd

    return pd.DataFrame(rows)


FIGURES = [("goodput", "max goodput (Gb/s)"), ("queue_mb", "max ToR queuing,\nstable loads (MB)"),
           ("p99", "p99 slowdown @50%"), ("top_delivery", "delivered / arrived\n@ highest load")]


def _figure(fig_df, path):
    from ..plots import new_figure
    from ..plots import save_figure as save

    cells = sorted(fig_df["cell"].unique())
    fig, axes = new_figure(len(FIGURES), len(cells), figsize=(3.6 * len(cells), 2.3 * len(FIGURES)),
                                squeeze=False)
    for c, cell in enumerate(cells):
        sub = fig_df[fig_df["cell"] == cell]
        sub = sub[sub["loads"].map(len) == sub["loads"].map(len).max()]  # lengths where every load ran
        ticks = sorted(sub["length_ms"].unique())
        for r, (col, label) in enumerate(FIGURES):
            ax = axes[r][c]
            for p, s in sub.sort_values("length_ms").groupby("protocol"):
                line = ax.plot(s["length_ms"], s[col], marker="o", label=p)[0]
                if col == "top_delivery":  # x: the highest load failed the stability test
                    bad = s[~s["top_stable"]]
                    ax.scatter(bad["length_ms"], bad[col], marker="x", s=60, color=line.get_color(), zorder=3)
            if col == "top_delivery":
                ax.axhline(sc.STABLE_DELIVERY, color="grey", lw=0.8, ls="--")
            ax.set_xscale("log", base=2)
            ax.set_xticks(ticks)
            ax.set_xticklabels([f"{t:g}" for t in ticks])
            ax.minorticks_off()
            if r == 0:
                ax.set_title(cell, fontsize=9)
            if c == 0:
                ax.set_ylabel(label, fontsize=8)
            if r == len(FIGURES) - 1:
                ax.set_xlabel("run length (ms)", fontsize=8)
    axes[0][-1].legend(fontsize=7)
    save(path, fig)


def report(df, out: str) -> str:
    df = frame(df)
    rows, conv = [], []
    for (p, cell), s in df.sort_values("length_ms").groupby(["protocol", "cell"]):
        for _, r in s.iterrows():
            warm = r["length_ms"] * sc.WARMUP_FRACTION[r["workload_name"]]
            rows.append((p, cell, f"{r['length_ms']:g}", f"{warm:g}", f"{r['goodput_per_host_gbps']:.1f}",
                         f"{r['delivery']:.3f}", f"{r['max_tor_mb']:.2f}", f"{r['slowdown_p99']:.2f}",
                         "stable" if r["stable"] else "UNSTABLE", f"{r['wall_time_s']:.0f}"))
    t = table(rows, ["protocol", "cell", "length ms", "warm-up ms", "goodput", "delivered", "max ToR MB", "p99",
                     "verdict", "wall s"])
    f = figures(df)
    frows = [(r["protocol"], r["cell"], f"{r['length_ms']:g}", ",".join(f"{x:.2f}" for x in r["loads"]),
              sc.fmt(r["goodput"], 1), sc.fmt(r["queue_mb"]), sc.fmt(r["p99"]),
              ",".join(f"{x:.2f}" for x in r["unstable"]) or "-", f"{r['wall_s']:.0f}")
             for _, r in f.sort_values(["protocol", "cell", "length_ms"]).iterrows()]
    ft = table(frows, ["protocol", "cell", "length ms", "loads", "max goodput", "max ToR MB", "p99 @50%",
                       "unstable loads", "wall s"])
    for (p, cell), s in f.groupby(["protocol", "cell"]):
        s = s[s["loads"].map(len) == s["loads"].map(len).max()]  # lengths where every load ran
        if len(s) < 2:
            continue  # one length says nothing about convergence
        at = [converged_at(s["length_ms"].tolist(), s[col].tolist()) for col in ("goodput", "queue_mb", "p99")]
        verdicts = [tuple(u) for u in s.sort_values("length_ms")["unstable"]]
        same = next((ln for ln, i in zip(sorted(s["length_ms"]), range(len(verdicts)))
                     if all(v == verdicts[-1] for v in verdicts[i:])), math.nan)
        conv.append((p, cell, f"{s['length_ms'].max():g}") + tuple("-" if math.isnan(x) else f"{x:g}" for x in at)
                    + (f"{same:g}",))
    c = table(conv, ["protocol", "cell", "longest ms", "goodput from", "ToR queuing from", "p99 from", "verdict from"])
    _figure(f, f"{out}/sird_runlength.png")
    df.drop(columns=[x for x in df.columns if "," in x]).to_csv(f"{out}/sird_runlength.csv", index=False)
    return ("SIRD Table 5 figures against run length (warm-up = "
            + ", ".join(f"{wk} {f:.0%}" for wk, f in sc.WARMUP_FRACTION.items()) + " of the run)\n\nEach run\n" + t
            + "\n\nTable 5's figures per cell over the loads run at each length\n" + ft
            + f"\n\nConverged from (ms; within {CONVERGED:.0%} of the longest run's value at that length and every "
            "longer one; verdict: the same unstable loads)\n"
            + c + f"\n\nwrote {out}/sird_runlength.png, sird_runlength.csv")


def _longest(protocol, cell, col):
    """`col` of the longest finished run of `protocol` in `cell` ("WKc balanced 0.90")."""
    def measure(df, out):
        d = frame(df)
        d = d[(d["protocol"] == protocol) & (d["cell"] == cell)]
        if d.empty:
            raise NotRun(f"{protocol} {cell}")
        return d.sort_values("length_ms")[col].iloc[-1]
    return measure


# SIRD's ToR queuing hardly depends on the run length (its queues are bounded by B - BDP per
# receiver): at the longest run it is the paper's Table 5 value of the cell (90% load, its highest
# stable load in our runs, holds the maximum).
CHECKS = [
    paper_value("SIRD max ToR queuing (MB), WKc balanced 90%, longest run",
                sc.paper_number("queue_mb", "sird", "WKc", "balanced"), 0.35,
                _longest("sird", "WKc balanced 0.90", "max_tor_mb"), relative=True, full_only=True,
                reason=sc.TABLE5_REASONS["queue_mb"]),
    paper_value("SIRD max ToR queuing (MB), WKa incast 90%, longest run",
                sc.paper_number("queue_mb", "sird", "WKa", "incast"), 0.35,
                _longest("sird", "WKa incast 0.90", "max_tor_mb"), relative=True, quick_tolerance=0.5,
                reason=sc.TABLE5_REASONS["queue_mb"],
                quick_reason="the quick runs are a few ms: bursts weigh more in a maximum"),
]

REPRO = Repro("sird-runlength", "SIRD Table 5 figures against run length (convergence)",
              "SIRD §5.1 methodology", build, report, CHECKS)
