"""The `dcnsim` command: run a spec, describe the parameters, run the demo, sweeps, results,
plots, summary packs of a store and reproductions."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, NoReturn, Optional, Sequence

from .errors import SimulationError, SpecError, UsageError

if TYPE_CHECKING:
    import pandas as pd


def _fmt(x: object, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        # Whole numbers from 10**digits up (never scientific notation for a goodput of 1,234 Gb/s).
        return f"{x:.{digits}g}" if abs(x) < 10**digits else f"{x:,.0f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def _unfinished(stats: dict) -> str:
    """Beside a slowdown figure: the counted flows it leaves out because they did not finish."""
    n = stats.get("unfinished") or 0
    return f"; {_fmt(n)} counted unfinished, not in these figures" if n else ""


def format_summary(s: dict) -> str:
    """A compact, human-readable table of a run's summary."""
    f = s["flows"]
    q = s["queues"]
    sd = s["slowdown"]
    rows = [
        ("run", f"{s.get('name') or '-'}  ({s['protocol']}, seed {s['seed']}, dcnsim {s['version']})"),
        ("hosts", f"{s['hosts']} x {_fmt(s['host_rate_gbps'])} Gb/s, base RTT {s['base_rtt_ps'] / 1e6:.2f} us, "
                  f"BDP {_fmt(s['bdp_bytes'])} B"),
        ("simulated", f"{s['sim_end_ps'] / 1e9:.3f} ms (window from {s['window_start_ps'] / 1e9:.3f} ms)"),
        ("flows", f"{_fmt(f['started'])} started, {_fmt(f['finished'])} finished, "
                  f"{_fmt(f['counted_finished'])} counted"
                  + (f" ({_fmt(f['counted_unfinished'])} counted flows unfinished: slowdowns cover finished flows only)"
                     if f.get("counted_unfinished") else "")),
        ("goodput", f"{_fmt(s['goodput_gbps'])} Gb/s total, {_fmt(s['goodput_per_host_gbps'])} Gb/s per host "
                    f"({_fmt(s['goodput_normalized'])} of capacity; offered {_fmt(s['offered_load_gbps'])} Gb/s)"),
        ("slowdown", f"median {_fmt(sd['median'])}, p99 {_fmt(sd['p99'])}, mean {_fmt(sd['mean'])} "
                     f"over {_fmt(sd['count'])} flows{_unfinished(sd)}"),
    ]
    for g in s["slowdown_by_size"]:
        rows.append((f"  {g['group']} {g['label']}",
                     f"median {_fmt(g['median'])}, p99 {_fmt(g['p99'])} ({_fmt(g['count'])} flows{_unfinished(g)})"))
    rows += [
        ("max switch queue", f"{_fmt(q['max_switch_bytes'])} B (by tier: "
                             + ", ".join(f"{k} {_fmt(v)}" for k, v in q["max_switch_bytes_by_tier"].items()) + ")"),
        ("drops / marks / trims", f"{_fmt(q['drops'])} / {_fmt(q['ecn_marks'])} / {_fmt(q['trims'])}"),
        ("transport", ", ".join(f"{k} {_fmt(v)}" for k, v in s["transport"].items()) or "-"),
        ("events", f"{_fmt(s['events'])} in {s['wall_time_s'] - s.get('setup_time_s', 0.0):.2f} s wall "
                   f"({s['events_per_sec'] / 1e6:.2f} M events/s; set-up {s.get('setup_time_s', 0.0):.2f} s apart)"
                   + (f", {s['cpu_time_s']:.2f} s CPU ({s['events_per_cpu_sec'] / 1e6:.2f} M events per CPU second)"
                      if s.get("events_per_cpu_sec") else "")),
    ]
    for name, j in (s.get("jobs") or {}).items():
        rows.append((f"job {name}", f"{_fmt(j['iterations_finished'])} iterations, "
                                    f"mean {_fmt(j['iteration_us_mean'])} us, p99 {_fmt(j['iteration_us_p99'])} us; "
                                    f"collective slowdown mean {_fmt(j['collective_slowdown_mean'])}, "
                                    f"p99 {_fmt(j['collective_slowdown_p99'])}"))
    pfc = s.get("pfc")
    if pfc:
        rows.append(("pfc", f"{_fmt(pfc['pause_frames_sent'])} pause frames, "
                            f"{_fmt(pfc['host_nics_paused'])} host NICs paused, "
                            f"{_fmt(pfc['lossless_drops'])} lossless drops"))
        if pfc.get("configuration_error"):
            rows.append(("CONFIGURATION ERROR", pfc["configuration_error"]))
    if s.get("deadlocked"):
        d = s.get("deadlock") or {}
        rows.append(("DEADLOCKED", f"at {d.get('at_ps', 0) / 1e6:.3f} us, cycle: " + " -> ".join(d.get("cycle", []))))
    for warning in s.get("warnings", []):
        rows.append(("warning", warning))
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def _parse_value(text: str) -> Any:
    """A --set value: TOML (numbers, booleans, strings in quotes, arrays, inline tables), else the
    text itself as a string."""
    from .spec import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except Exception:
        return text


def apply_sets(spec: dict, sets: Optional[Sequence[str]]) -> dict:
    """Applies --set KEY=VALUE items to a spec dict (in place)."""
    from .spec import set_path

    for item in sets or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SpecError(item, "--set needs KEY=VALUE")
        set_path(spec, key.strip(), _parse_value(value.strip()))
    return spec


def build_spec(spec_path: str | os.PathLike[str], sets: Optional[Sequence[str]]) -> dict:
    """The spec `dcnsim run` simulates: the file with each --set KEY=VALUE applied."""
    from .spec import load_spec

    return apply_sets(load_spec(spec_path), sets)


def _check_out_dir(out: Optional[str]) -> None:
    """Before any simulation: an --out that exists must be a directory (else hours of runs end in
    an error when the results are written)."""
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory (the results are a directory of files)")


def _check_plot_out(out: str | os.PathLike[str]) -> None:
    """Before loading results: matplotlib must be able to write --out's format."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(out).suffix.lstrip(".").lower()
    if suffix not in formats:
        what = f"'.{suffix}'" if suffix else "a file without a suffix"
        raise UsageError(f"--out {out}: cannot write a plot as {what} "
                         f"(use one of: {', '.join(sorted(formats))})")


def _run(spec_path: str | os.PathLike[str], out: str, quiet: bool, sets: Optional[Sequence[str]], csv: bool = False,
         plot: bool = False, flows: bool = True) -> int:
    """Runs and saves. Without --csv and --plot this imports neither pandas nor matplotlib: the
    tables go from the simulator to Parquet in Rust (see dcnsim.result)."""
    from .spec import run

    if not flows and (csv or plot):
        raise UsageError("--no-flows keeps no flow table, which --csv and --plot need")
    _check_out_dir(out)
    if plot:
        _check_plot_out(Path(out) / "slowdown.png")  # matplotlib is there, before hours of simulation
    result = run(build_spec(spec_path, sets), progress=not quiet, flows=flows)
    result.save_replacing(out, csv=csv, plot=plot)
    if not quiet:
        print(format_summary(result.summary))
        optional = ("timeseries", "trace", "flow_state", "collectives", "iterations")
        written = ["queues.parquet", "switches.parquet"]
        written += [f"{name}.parquet" for name in optional if (Path(out) / f"{name}.parquet").exists()]
        written += (["flows.csv"] if csv else []) + ["summary.json"] + (["slowdown.png"] if plot else [])
        written = (["flows.parquet"] if flows else []) + written
        print(f"\nwrote {', '.join(written)} in {out}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from .sweep import load_sweep, run_sweep

    _check_out_dir(args.out)
    spec = load_sweep(args.sweep)
    df = run_sweep(spec, args.out, executor=args.executor, workers=args.workers, address=args.address, quiet=args.quiet,
                   reuse_other_builds=args.reuse_other_builds)
    failed = df[df["status"] == "failed"]
    if not args.quiet:
        cols = [c for c in ["key", *spec.axes, "status", "goodput_gbps", "slowdown_p99", "max_switch_bytes"] if c in df]
        print(df[cols].to_string(index=False))
    return 1 if len(failed) else 0


def _results(args: argparse.Namespace) -> int:
    from .errors import naming
    from .sweep import results

    df = results(args.dir, sweep=args.sweep)
    if args.csv:
        with naming(args.csv):
            df.to_csv(args.csv, index=False)
    names = df["sweep"].dropna().unique()
    if len(names) > 1:
        counts = df.attrs["runs_by_sweep"]
        print(f"{args.dir} holds {len(names)} sweeps: " + ", ".join(f"{n} ({counts[n]} runs)" for n in names)
              + " (--sweep NAME shows one)")
    for line in store_notes(df, args.dir):
        print(line)
    print(_without_damaged(df).to_string(index=False))
    return 0


def store_notes(df: pd.DataFrame, where: object) -> List[str]:
    """What a results table leaves out or takes from elsewhere: a rebuilt sweep.json, damaged runs
    (each with its file and the reason), runs stored by another build of the core."""
    notes = []
    if df.attrs.get("index_damage"):
        notes.append(f"note: {where}: sweep.json was damaged ({df.attrs['index_damage']}); rebuilt from the runs "
                     f"(the damaged file is kept as sweep.json.damaged)")
    damaged = df[df["status"] == "damaged"] if "status" in df else df.iloc[0:0]
    if len(damaged):
        notes.append(f"{len(damaged)} damaged run(s) left out of the table (the next sweep runs them again):")
        notes += [f"  {key}: {error}" for key, error in zip(damaged["key"], damaged["error"])]
    if "build" in df:
        here = df.attrs.get("build")
        other = df[(df["status"] == "done") & (df["build"] != here)]
        if len(other):
            builds = ", ".join(sorted(set(other["build"])))
            notes.append(f"{len(other)} run(s) stored by another build of the core ({builds}; this build: {here}): "
                         f"a sweep runs them again unless --reuse-other-builds")
    return notes


def _without_damaged(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["status"] != "damaged"] if "status" in df else df


def _pack(args: argparse.Namespace) -> int:
    from .sweep.pack import unpack_runs, write_pack

    if args.cmd == "pack":
        n, damaged = write_pack(args.dir, args.file)
        print(f"wrote {args.file}: {n} finished runs of {args.dir} (summaries, specs; no flow tables)")
        if damaged:
            print(f"left out {len(damaged)} damaged run(s) (a sweep run into {args.dir} runs them again):")
            for d in damaged:
                print(f"  {d}")
    else:
        done = unpack_runs(args.file, args.dir)
        other = (f"; {done.other_builds} of those added were stored by another build of the core, which a sweep "
                 f"reuses only with --reuse-other-builds") if done.other_builds else ""
        print(f"{args.dir}: added {done.added} summary-only runs from {args.file} ({done.present} were already "
              f"there{other})")
    return 0


PLOTS = ("slowdown", "queue-goodput", "queue-tiers", "fct-cdf", "throughput", "timeseries")


def _need_columns(df: pd.DataFrame, cols: Sequence[str], option: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise UsageError(f"{option}: no column {', '.join(repr(c) for c in missing)} in the results; "
                         f"columns: {', '.join(map(str, df.columns))}")


def _plot(args: argparse.Namespace) -> int:
    from . import plots
    from .sweep import load_flows, load_summary, results

    _check_plot_out(args.out)
    df = results(args.dir, sweep=args.sweep)
    for line in store_notes(df, args.dir):
        print(line, file=sys.stderr)
    done = df[df["status"] == "done"]
    if done.empty:
        raise UsageError(f"{args.dir} has no finished run to plot ({len(df)} runs: "
                         + ", ".join(f"{n} {s}" for s, n in df["status"].value_counts().items()) + ")")
    _need_columns(df, [args.by], "--by")
    _need_columns(df, args.label or [], "--label")
    done = done.assign(**{args.by: done[args.by].map(plots.hashable)})  # a zipped axis holds lists
    if args.kind == "slowdown":
        plots.slowdown_by_group(done, args.out, by=args.by)
        data = plots.slowdown_by_group_data(done, by=args.by)
    elif args.kind == "queue-goodput":
        plots.queue_vs_goodput(done, args.out, by=args.by)
        data = plots.queue_vs_goodput_data(done, by=args.by)
    elif args.kind == "queue-tiers":
        plots.queue_by_tier(done, args.out, by=args.by)
        data = plots.queue_by_tier_data(done, by=args.by)
    elif args.kind == "timeseries":
        import pandas as pd

        from .sweep.store import Store

        key = args.key or done["key"].iloc[0]
        if key not in set(df["key"]):
            raise UsageError(f"--key: no run {key!r} in {args.dir}")
        path = Store.open(args.dir).run_dir(key) / "timeseries.parquet"
        if not path.exists():
            raise UsageError(f"run {key} has no time series: set metrics.sample_interval_us in its spec")
        ts = pd.read_parquet(path)
        title = plots.run_labels(done).get(key, "")
        plots.timeseries(ts, args.out, series=args.series, title=title)
        data = plots.timeseries_data(ts, series=args.series)
    else:
        labels = plots.run_labels(done, args.label)
        flows = {labels[k]: load_flows(args.dir, k) for k in done["key"]}
        if args.kind == "fct-cdf":
            plots.fct_cdf(flows, args.out)
            data = plots.fct_cdf_data(flows)
        else:
            windows = {labels[k]: load_summary(args.dir, k)["window_ps"] for k in done["key"]}
            plots.sorted_throughput(flows, windows, args.out)
            data = plots.sorted_throughput_data(flows, windows)
        print(f"wrote {args.out} ({len(data)} points, {len(flows)} curves, one per run)")
        return 0
    print(f"wrote {args.out} ({len(data)} points)")
    return 0


def _repro(args: argparse.Namespace) -> int:
    from . import repro
    from .sweep import run_sweep, stored_sweep

    if args.name == "list":
        for r in repro.REGISTRY:
            print(f"{r.name:<12} {r.title}  [{r.paper}]")
        return 0
    try:
        entry = repro.get(args.name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    out = args.out or f"out/repro/{entry.name}{'-quick' if args.quick else ''}"
    _check_out_dir(out)
    if args.stored:
        df = stored_sweep(entry.build(args.quick), out)
        done = int((df["status"] == "done").sum())
        print(f"{done} of {len(df)} runs stored in {out}" + ("; reporting those" if done else ": nothing to report"))
        for line in store_notes(df, out):
            print(line)
        if not done:
            return 0
    else:
        df = run_sweep(entry.build(args.quick), out, executor=args.executor, workers=args.workers,
                       address=args.address, quiet=args.quiet, reuse_other_builds=args.reuse_other_builds)
    print(entry.report(df, out))
    if not args.check:
        return 0
    outcomes = entry.check(df, out, args.quick)
    print("\n" + repro.format_checks(outcomes))
    # With --stored a check whose runs are not in the store yet is listed as not run, not failed.
    return 0 if all(o.ok or (args.stored and o.not_run) for o in outcomes) else 1


def demo_spec_path() -> Path:
    return Path(str(resources.files("dcnsim") / "specs" / "demo.toml"))


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {n}")
    return n


class _Parser(argparse.ArgumentParser):
    """Reports a bad command line as one line (and exit status 2), like every other user error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="dcnsim", description="Packet-level datacenter network simulator.")
    ap.add_argument("--version", action="version", version=version_text(),
                    help="the version and the build of the core (its id and the git commit it was built from)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a spec file")
    r.add_argument("spec", help="TOML spec file")
    r.add_argument("--out", required=True, help="write flows.parquet, queues.parquet, switches.parquet, summary.json "
                   "(and timeseries/trace/flow_state.parquet when the spec asks for them) here")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a spec key, e.g. workload[0].load=0.7")
    r.add_argument("--csv", action="store_true", help="also write the flow table as flows.csv")
    r.add_argument("--plot", action="store_true", help="also draw slowdown.png (slowdown by flow size; imports "
                   "matplotlib and pandas; `dcnsim plot slowdown DIR --out F.png` draws the size groups later)")
    r.add_argument("--no-flows", action="store_true", help="keep no flow table (no flows.parquet): the summary is "
                   "the same, and a run of millions of flows needs about a third less memory")
    r.add_argument("--quiet", action="store_true", help="no progress and no summary table")
    d = sub.add_parser("describe", help="list protocols, topologies, workloads, setups and every parameter")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.add_argument("--markdown", action="store_true", help="the parameter reference as Markdown")
    m = sub.add_parser("demo", help="run the demo scenario (DCTCP on a leaf-spine, websearch at 50%% load) and "
                       "draw slowdown.png")
    m.add_argument("--out", default="out/demo", help="output directory (default: out/demo)")
    m.add_argument("--csv", action="store_true", help="also write the flow table as flows.csv")
    m.add_argument("--quiet", action="store_true")
    sw = sub.add_parser("sweep", help="run a sweep (a base spec times axes) into a results store")
    sw.add_argument("sweep", help="sweep TOML: name, base (path or table), [axes], filter")
    sw.add_argument("--out", required=True, help="results store directory (re-running resumes; other sweeps "
                    "stored there are kept)")
    rs = sub.add_parser("results", help="print the results table of a sweep store (or of a `dcnsim run` directory)")
    rs.add_argument("dir")
    rs.add_argument("--sweep", help="only the runs of the sweep with this name")
    rs.add_argument("--csv", help="also write the table as CSV")
    pl = sub.add_parser("plot", help="draw a standard plot from a sweep store (or a `dcnsim run` directory)")
    pl.add_argument("kind", choices=PLOTS)
    pl.add_argument("dir")
    pl.add_argument("--out", required=True, help="PNG path (a PDF is written beside it)")
    pl.add_argument("--sweep", help="only the runs of the sweep with this name")
    pl.add_argument("--by", default="protocol", help="results column that makes the series (default: protocol)")
    pl.add_argument("--label", nargs="*", help="columns that label the per-run curves (fct-cdf, throughput); "
                    "default: protocol and every axis that varies")
    pl.add_argument("--key", help="timeseries: which run (default: the first)")
    pl.add_argument("--series", default="host_rx_gbps", choices=["host_rx_gbps", "switch_queue_bytes"])
    pk = sub.add_parser("pack", help="write a sweep store's finished runs, without their flow tables, to one small "
                        "file (gzip'd JSON Lines) that `dcnsim unpack` adds to another store")
    pk.add_argument("dir", help="the sweep store")
    pk.add_argument("file", help="the pack to write (e.g. table5.jsonl.gz)")
    up = sub.add_parser("unpack", help="add a pack's runs to a sweep store as finished (summary-only) runs, so "
                        "a sweep with flow_tables = false run there again skips them (runs of another build of "
                        "the core only with --reuse-other-builds)")
    up.add_argument("file", help="the pack (written by `dcnsim pack`)")
    up.add_argument("dir", help="the sweep store (created if missing)")
    rp = sub.add_parser("repro", help="reproduce a paper figure or table: `dcnsim repro list`")
    rp.add_argument("name")
    rp.add_argument("--out")
    rp.add_argument("--quick", action="store_true", help="the small variant that finishes in minutes")
    rp.add_argument("--check", action="store_true", help="hold ours to each check (the paper's number, bound or "
                    "ordering, or our own criterion); exit 1 when any falls outside its accepted range")
    rp.add_argument("--stored", action="store_true", help="run nothing: report (and check) the runs the store "
                    "already holds, e.g. of a long sweep still running or stopped part-way")
    for p in (sw, rp):
        p.add_argument("--executor", choices=["local", "ray"], default="local")
        p.add_argument("--workers", type=_positive_int, help="local processes (default: all cores)")
        p.add_argument("--address", help="Ray cluster address (default: start a local Ray instance)")
        p.add_argument("--quiet", action="store_true")
        p.add_argument("--reuse-other-builds", action="store_true", help="take runs the store holds from another "
                       "build of the core (another version of its sources) as they are, instead of running them "
                       "again under this build")
    return ap


def version_text() -> str:
    from . import __version__
    from .build import build_info

    build = build_info()
    return f"dcnsim {__version__} (build {build['id']}, git {build['git']})"


def _dispatch(args: argparse.Namespace) -> int:
    if args.cmd == "describe":
        from . import reference
        from .spec import describe

        desc = describe()
        if args.markdown:
            print(reference.markdown(desc), end="")
        else:
            print(json.dumps(desc, indent=2) if args.json else reference.text(desc))
        return 0
    if args.cmd == "demo":
        return _run(demo_spec_path(), args.out, args.quiet, [], args.csv, plot=True)
    if args.cmd == "sweep":
        return _sweep(args)
    if args.cmd == "results":
        return _results(args)
    if args.cmd == "plot":
        from .errors import naming

        with naming(args.out):  # a full disk while the figure is written
            return _plot(args)
    if args.cmd == "repro":
        return _repro(args)
    if args.cmd in ("pack", "unpack"):
        return _pack(args)
    return _run(args.spec, args.out, args.quiet, args.set, args.csv, args.plot, flows=not args.no_flows)


def _silence_stdout() -> None:
    """Points stdout at /dev/null, so the interpreter's last flush to a closed pipe is quiet."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line. A user error (a bad spec, sweep, filter, path or option) prints one line
    naming what is wrong and exits 2; a failed run exits 1; Ctrl-C exits 130."""
    args = parser().parse_args(argv)
    try:
        return _dispatch(args)
    except BrokenPipeError:
        # The reader went away (`dcnsim describe | head`): what it read was what it wanted.
        _silence_stdout()
        return 0
    except (SpecError, UsageError) as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except OSError as e:  # a spec, sweep or results file that cannot be read or written; the message names it
        named = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else _one_line(e)
        print(f"error: {named}", file=sys.stderr)
        return 2
    except SimulationError as e:
        print(f"error: the run failed: {_one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
