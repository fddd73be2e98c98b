"""Sweeps: many runs from one definition, executed locally or on Ray, stored so nothing finished
is ever lost or recomputed, and loaded back as one table.

    import dcnsim
    df = dcnsim.sweep("base.toml", {"workload[0].load": [0.3, 0.5, 0.7], "seed": [1, 2]}, out="results/")
    df = dcnsim.results("results/")          # one row per run: axes + summary metrics
    flows = dcnsim.sweep_flows("results/", df.key[0])
"""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Set, Tuple, Union

from .. import _core
from ..build import build_id, short
from ..errors import SpecError, UsageError
from .checks import Damaged, JsonObject
from .progress import Progress
from .spec import SweepSpec, as_sweep, compile_filter, load_sweep
from .store import SINGLE_RUN_KEY, RunStatus, Store, StrPath, SweepTag, build_key, run_key, spec_key

if TYPE_CHECKING:
    import pandas as pd

    from ..spec import SpecLike

__all__ = ["sweep", "run_sweep", "stored_sweep", "results", "load_flows", "load_sweep", "SweepSpec", "run_key",
           "compile_filter"]

POLL_S = 0.5

#: A run of a sweep against a store: its key, axis values and spec.
KeyedRun = Tuple[str, Dict[str, Any], JsonObject]


def run_sweep(spec: SweepSpec, out: StrPath, executor: str = "local", workers: Optional[int] = None,
              address: Optional[str] = None, quiet: bool = False, reuse_other_builds: bool = False) -> pd.DataFrame:
    """Runs every run of `spec` not already finished in `out`; returns the results of its runs.

    Other sweeps stored in `out` are kept. A run another live sweep is simulating is not simulated
    again: this one waits for it (or takes it over if its owner dies). A damaged run is run again.
    A run stored by another build of the core is run again under this build (the other build's
    run stays) unless `reuse_other_builds`, which takes it as it is."""
    if executor not in ("local", "ray"):
        raise ValueError(f"unknown executor {executor!r}: expected 'local' or 'ray'")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise UsageError(f"workers must be a whole number >= 1, got {workers!r}")
    runs = spec.runs()
    if not runs:
        raise SpecError("filter", f"`{spec.filter}` matches no run of the axes") if spec.filter else \
            SpecError("axes", "the sweep has no runs")
    if Path(out).exists() and not Path(out).is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory (a sweep's results are a directory of files)")
    from .executors import run_local, run_ray  # multiprocessing: imported when a sweep runs, not with dcnsim

    store = Store(out)
    store.rekey()
    plan = _plan(store, runs, spec.flow_tables, reuse_other_builds)
    store.add_sweep(spec.name, spec.to_dict(), [{"key": k, "axes": v} for k, v, _ in plan.keyed])
    if not quiet:
        plan.report()
    todo: List[Tuple[str, JsonObject, SweepTag]] = []
    seen: Set[str] = set()
    for k, values, s in plan.keyed:
        if k in plan.todo and k not in seen:
            todo.append((k, s, {"name": spec.name, "axes": values}))
            seen.add(k)
    unique = {k for k, _, _ in plan.keyed}
    progress = Progress(total=len(unique), cached=len(unique) - len(todo), quiet=quiet)
    progress.show()
    tasks = {k: (k, s, tag) for k, s, tag in todo}
    try:
        while todo:
            busy: List[str] = []

            def finished(r: RunStatus) -> None:
                if r["status"] == "busy":
                    busy.append(r["key"])
                progress.finish(r)

            if executor == "local":
                run_local(str(store.root), todo, workers, finished, progress.start, spec.flow_tables)
            else:
                run_ray(str(store.root.resolve()), todo, address, finished, progress.start, spec.flow_tables)
            todo = [tasks[k] for k in _wait_for_others(store, busy, progress, spec.flow_tables)]
    finally:
        progress.close()
    return results(out, keys=[k for k, _, _ in plan.keyed])


class _Plan:
    """A sweep's runs against a store: (key, axis values, spec) of each, the keys to simulate,
    and why some finished runs were not taken (damaged; stored by another build, not reused)."""

    def __init__(self) -> None:
        self.keyed: List[KeyedRun] = []
        self.todo: Set[str] = set()
        self.damaged: List[Damaged] = []
        self.other_builds: List[Optional[str]] = []  # their builds (None: unknown), one per run not reused
        self.reused: List[Optional[str]] = []

    def report(self) -> None:
        """Says on stderr which finished runs this sweep does not take as they are, and why."""
        if self.damaged:
            _note(f"{len(self.damaged)} damaged run(s) are run again: "
                  + "; ".join(str(d) for d in self.damaged[:3]) + ("; ..." if len(self.damaged) > 3 else ""))
        if self.other_builds:
            builds = ", ".join(sorted({short(b) for b in self.other_builds}))
            _note(f"{len(self.other_builds)} run(s) of this sweep are stored by another build of the core "
                  f"({builds}; this build: {short(build_id())}): not reused, they run again under this build "
                  f"(--reuse-other-builds reuses them as they are)")
        if self.reused:
            builds = ", ".join(sorted({short(b) for b in self.reused}))
            _note(f"{len(self.reused)} run(s) stored by another build of the core ({builds}) are reused as they are "
                  f"(--reuse-other-builds; this build: {short(build_id())})")


def _note(text: str) -> None:
    print(f"[dcnsim sweep] {text}", file=sys.stderr)


def _plan(store: Store, runs: List[Tuple[Dict[str, Any], JsonObject]], flow_tables: bool,
          reuse_other_builds: bool) -> _Plan:
    """Keys each run by this build. A run this build has not stored (usably) but another build
    has is taken from that build with `reuse_other_builds`, else simulated here."""
    plan, others, here = _Plan(), store.other_builds(), build_id()
    for values, run_spec in runs:
        own_spec_key = spec_key(run_spec)
        key = build_key(own_spec_key, here)
        if store.satisfies(key, flow_tables):
            plan.keyed.append((key, values, run_spec))
            continue
        damage = store.damage(key) if store.is_done(key) else None
        if damage is not None and key not in plan.todo:
            plan.damaged.append(damage)
        stored = [(k, b) for k, b in others.get(own_spec_key, []) if store.satisfies(k, flow_tables)]
        if stored and reuse_other_builds:
            key = stored[0][0]
            plan.reused.append(stored[0][1])
        else:
            if stored:
                plan.other_builds.append(stored[0][1])
            plan.todo.add(key)
        plan.keyed.append((key, values, run_spec))
    return plan


def stored_sweep(spec: SweepSpec, out: StrPath, reuse_other_builds: bool = True) -> pd.DataFrame:
    """The results table of `spec`'s runs as `out` holds them now, running nothing: runs not
    finished show as missing, running, failed or damaged. A run only another build of the core
    has stored is reported from that build (the table's `build` column says which; without
    `reuse_other_builds` it shows as missing). Records the sweep in `out` (so a later run_sweep or
    `dcnsim results` lists it)."""
    store = Store(out)
    store.rekey()
    plan = _plan(store, spec.runs(), False, reuse_other_builds)
    store.add_sweep(spec.name, spec.to_dict(), [{"key": k, "axes": v} for k, v, _ in plan.keyed])
    return results(out, keys=[k for k, _, _ in plan.keyed])


def _wait_for_others(store: Store, busy: List[str], progress: Progress, flow_tables: bool) -> List[str]:
    """Waits until each run another sweep holds is finished or failed; returns those whose owner
    died meanwhile, or that it finished without the flow table this sweep wants (to run here)."""
    orphans: List[str] = []
    waiting = list(busy)
    since = time.time() - 1.0  # a failure recorded after this is the other sweep's attempt
    while waiting:
        still = []
        for k in waiting:
            if store.satisfies(k, flow_tables):
                progress.finish({"key": k, "status": "done"}, elsewhere=True)
            elif store.claimed(k):
                still.append(k)
            elif (failure := store.failure(k)) and store.failure_time(k) >= since:
                progress.finish({"key": k, "status": "failed", **failure}, elsewhere=True)
            else:
                progress.waiting -= 1
                orphans.append(k)
        waiting = still
        if waiting:
            time.sleep(POLL_S)
    return orphans


def sweep(base: Union[SweepSpec, SpecLike], axes: Optional[Dict[str, List[Any]]] = None, out: StrPath = "sweep-out",
          filter: Optional[str] = None, name: str = "sweep", flow_tables: bool = True, **kwargs: Any) -> pd.DataFrame:
    """Expands `base` (a spec dict, TOML path or text) over `axes` and runs it; see `run_sweep`.
    Without `flow_tables`, the runs are stored without their flow tables (see `SweepSpec`)."""
    return run_sweep(as_sweep(base, axes, filter, name, flow_tables), out, **kwargs)


@functools.lru_cache(maxsize=1)
def summary_columns() -> Tuple[Tuple[str, str], ...]:
    """(path, column) of every summary field a sweep table carries, from the core's summary schema
    (`_core.summary_schema()`: the one definition of the summary's fields). `{key}` in a path stands
    for each key of a table (a tier, a transport counter), `[{key}]` for each item of a list keyed by
    its `group`; the column names it the same way."""
    return tuple((f["path"], f["column"]) for f in json.loads(_core.summary_schema()) if f["column"])


def _at(value: object, segments: List[str], key: object = None) -> Iterator[Tuple[object, object]]:
    """(key, value) for each value under `segments` of a schema path; a missing last segment (a run
    stored before the field existed) gives None, a missing table or list nothing."""
    if not segments:
        yield key, value
        return
    seg, rest = segments[0], segments[1:]
    if seg == "{key}":
        for k, v in (value if isinstance(value, dict) else {}).items():
            yield from _at(v, rest, k)
    elif seg == "[{key}]":
        for item in value if isinstance(value, list) else []:
            yield from _at(item, rest, item.get("group"))
    elif isinstance(value, dict) and seg in value:
        yield from _at(value[seg], rest, key)
    elif not rest:
        yield key, None


def flatten_summary(s: JsonObject) -> Dict[str, object]:
    """The summary metrics a sweep table carries, one column each (`summary_columns`): rates,
    slowdowns by size group, queues per tier and the first transport's counters over the
    measurement window (`transport_timeouts`, `transport_retransmissions`, ...)."""
    row: Dict[str, object] = {}
    for path, column in summary_columns():
        for key, v in _at(s, path.replace("[{key}]", ".[{key}]").split(".")):
            row[column if key is None else column.replace("{key}", str(key))] = v
    return row


def _run_row(store: Store, key: str) -> Dict[str, object]:
    row: Dict[str, object] = {}
    if store.is_done(key):
        try:
            summary = store.summary(key)
        except Damaged as e:
            return {"status": "damaged", "error": str(e)}
        row["status"] = "done"
        row["build"] = short(store.done_record(key).get("build"))
        row.update(flatten_summary(summary))
    elif store.claimed(key):
        row["status"] = "running"
    elif f := store.failure(key):
        row.update(status="failed", error=f"{f['error']}: {f['message']}")
    else:
        row["status"] = "missing"
    return row


def results(out: StrPath, sweep: Optional[str] = None, keys: Optional[List[str]] = None) -> pd.DataFrame:
    """One row per run stored in `out`: key, sweep, status (done, failed, running, missing,
    damaged), error (for a damaged run: the file and the reason), axis values, build (of the core
    that made a finished run: the first 12 digits of its id, "unknown" for runs stored before
    builds were recorded), metrics. Every sweep run into `out` is listed (`sweep` names one), each
    run once. `out` may also be a directory written by `dcnsim run` (one row, key ".").

    df.attrs holds "axes", "runs_by_sweep" (name -> runs it lists, shared runs counted in each),
    "build" (this build's short id) and "index_damage" (why sweep.json was rebuilt, or None)."""
    import pandas as pd

    store = Store.open(out)
    if store.single_run:
        df = pd.DataFrame([{"key": SINGLE_RUN_KEY, "sweep": None, **_run_row(store, SINGLE_RUN_KEY)}])
        df.attrs.update(axes=[], runs_by_sweep={}, build=short(build_id()), index_damage=None)
        return df
    sweeps = store.read_sweeps()
    if sweep is not None:
        known = sorted({s["name"] for s in sweeps})
        sweeps = [s for s in sweeps if s["name"] == sweep]
        if not sweeps:
            raise UsageError(f"{out} holds no sweep named {sweep!r}; it holds: {', '.join(known)}")
    rows: List[Dict[str, object]] = []
    seen: Dict[str, int] = {}
    axes: Dict[str, None] = {}
    by_sweep: Dict[str, Set[str]] = {}
    for s in sweeps:
        defined = s["definition"].get("axes")
        axes.update(dict.fromkeys(defined if isinstance(defined, dict) else {}))
        by_sweep.setdefault(s["name"], set()).update(r["key"] for r in s["runs"])
        for r in s["runs"]:
            if r["key"] not in seen:
                seen[r["key"]] = len(rows)
                rows.append({"key": r["key"], "sweep": s["name"], **r["axes"]})
    if keys is not None:
        rows = [rows[seen[k]] for k in dict.fromkeys(keys) if k in seen]
    for row in rows:
        row.update(_run_row(store, str(row["key"])))
    df = pd.DataFrame(rows) if rows else pd.DataFrame(columns=["key", "sweep", "status"])
    df.attrs.update(axes=list(axes), runs_by_sweep={n: len(k) for n, k in by_sweep.items()},
                    build=short(build_id()), index_damage=store.index_damage.reason if store.index_damage else None)
    return df


def load_flows(out: StrPath, key: str) -> pd.DataFrame:
    """The per-flow table of one finished run (key "." for a `dcnsim run` directory)."""
    import pandas as pd

    from ..result import with_microseconds
    from .store import summary_only

    store = Store.open(out)
    run_dir = store.run_dir(key)
    if summary_only(run_dir):
        raise UsageError(f"run {key} in {out} has no flow table (made by a sweep with flow_tables = false, or "
                         f"unpacked from a summary pack); a sweep with flow_tables = true runs it again with one")
    damage = store.damage(key) if store.is_done(key) else None
    if damage is not None:
        raise UsageError(f"run {key} in {out} is damaged ({damage}); running its sweep again redoes it")
    if not (run_dir / "flows.parquet").exists():
        raise UsageError(f"run {key} in {out} has no flow table ({run_dir / 'flows.parquet'} is missing)")
    return with_microseconds(pd.read_parquet(run_dir / "flows.parquet"))


def load_summary(out: StrPath, key: str) -> JsonObject:
    """The checked summary of a finished run; a UsageError naming the damaged file otherwise."""
    return Store.open(out).summary(key)
