"""The results store: one directory per run, named by a key derived from the run's resolved spec.

DIR/
  sweep.json            every sweep run into DIR: its name, definition and runs (key + axis values)
  runs/<key>/           a finished run: flows/queues/switches.parquet, summary.json, spec.json, DONE
                        (DONE records the build of the core that made it, and the sweep that asked)
  runs/<key>.failed     a failed run: error type and message (JSON); retried on the next attempt
  runs/<key>.claim      a run being simulated: the owner's host and pid (JSON), touched every 30 s
  runs/.tmp-<key>-<pid> a run being written; renamed into place only when complete
  .lock                 serializes updates of sweep.json
  executed.log          one line per simulation completed here (for audits and tests)

A run counts as finished only when its directory exists with DONE inside; the directory appears by
an atomic rename, so a killed writer leaves at most a stray temp directory, never a half run.
A run is claimed (a file created exclusively) before it is simulated, so sweeps sharing DIR never
simulate it twice; a claim whose owner died (same host: its pid is gone; any host: no heartbeat
for STALE_CLAIM_S; a claim file that is not a claim) is taken over. A directory written by
`dcnsim run` (summary.json, no sweep.json) reads as a store of one run whose key is ".".

A run's key is its spec's key (the resolved spec, the files it names, the version) and the build
id of the core (dcnsim.build): runs made by another build of the core keep their own keys, so a
sweep never takes them for this build's, and the results say which build stored each run.
Runs stored before builds were recorded (and packs of them) are of an unknown build, keyed by
their spec key alone.

Every stored file is checked when read (see checks.py): a damaged run is reported with the file
and the reason and is run again by the next sweep; a damaged sweep.json is rebuilt from the runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple, TypedDict, Union, cast

from .. import __version__
from ..build import build_git, build_id
from ..errors import UsageError, naming, write_text
from ..spec import resolve
from .checks import Damaged, JsonObject, check_fields, check_run, parse_json, read_json_object

if TYPE_CHECKING:
    from ..result import Result

HEARTBEAT_S = 30.0
STALE_CLAIM_S = 120.0
CLAIM_WRITE_S = 10.0  # an empty claim older than this was never written: its owner died
SINGLE_RUN_KEY = "."

StrPath = Union[str, "os.PathLike[str]"]


class RunEntry(TypedDict):
    """A run of a sweep entry: its key and axis values."""

    key: str
    axes: Dict[str, Any]


class SweepEntry(TypedDict):
    """A sweep of sweep.json: its name, definition (as given) and runs."""

    name: str
    definition: Dict[str, Any]
    runs: List[RunEntry]


class SweepTag(TypedDict):
    """The sweep that asked for a run, as its DONE records it."""

    name: str
    axes: Dict[str, Any]


class _Failure(TypedDict):
    error: str
    message: str


class FailureRecord(_Failure, total=False):
    """A run's recorded failure: the error's type and message, and the spec field it names."""

    field: object


class _Status(TypedDict):
    key: str
    status: str  # "done", "failed" or "busy"


class RunStatus(_Status, total=False):
    """What `execute` reports of a run: done (`cached` or not), busy, or failed (with its failure)."""

    cached: bool
    error: str
    message: str
    field: object


class ClaimOwner(TypedDict):
    host: str
    pid: int


def canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)


def _file_digest(path: str) -> Optional[str]:
    import hashlib  # OpenSSL: 4 MB and milliseconds that `import dcnsim` need not pay

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def named_files(resolved: JsonObject) -> List[str]:
    """Every file a resolved spec names: flow lists (any path), CDF files (a value that is not a
    shipped CDF name, by the core's rule: it holds '/' or ends in .cdf)."""
    files = []
    for w in resolved.get("workload", []):
        if w.get("kind") == "flow_list" and isinstance(w.get("path"), str):
            files.append(w["path"])
        cdf = w.get("cdf")
        if isinstance(cdf, str) and ("/" in cdf or cdf.endswith(".cdf")):
            files.append(cdf)
    return files


def run_key(spec: JsonObject, build: Optional[str] = None) -> str:
    """Key of a run: its spec key (see `spec_key`) and the build of the core that makes it (this
    one unless `build` says)."""
    return build_key(spec_key(spec), build or build_id())


def spec_key(spec: JsonObject) -> str:
    """Key of a run's spec: the resolved spec without the keys at their documented defaults (so key
    order, spelt-out defaults and keys a later version adds with behaviour-preserving defaults do
    not matter), the contents of every file it names, and the software version."""
    return _key_of_resolved(resolve(spec), __version__)


def build_key(spec_key_: str, build: Optional[str]) -> str:
    """The key of the run of a spec key made by `build`; a run that recorded no build (stored
    before builds were) is keyed by its spec key alone."""
    import hashlib

    if not build:
        return spec_key_
    return hashlib.sha256(f"{spec_key_}:{build}".encode()).hexdigest()[:20]


def _key_of_resolved(resolved: JsonObject, version: str) -> str:
    import hashlib

    files = {f: _file_digest(f) for f in named_files(resolved)}
    doc = canonical({"spec": without_defaults(resolved), "files": files, "version": version})
    return hashlib.sha256(doc.encode()).hexdigest()[:20]


def without_defaults(resolved: JsonObject) -> JsonObject:
    """`resolved` minus every key whose value is the default the core documents for it (transport
    keys by the table's protocol). Within one version the map is one-to-one, since a resolved spec
    holds every key; across versions, a key one version lacks and another holds at its default
    give the same result: a run stored before a parameter existed stays valid."""
    defaults = _documented_defaults()
    out = _strip(resolved, "", defaults, None)
    if isinstance(resolved.get("workload"), list):
        out["workload"] = [_strip(w, "workload[].", defaults, None) for w in resolved["workload"]]
    if isinstance(resolved.get("transports"), dict):
        out["transports"] = {n: _strip(t, "transport.", defaults, t.get("protocol"))
                             for n, t in resolved["transports"].items()}
    return out


def _strip(table: JsonObject, prefix: str, defaults: Dict[Tuple[str, Optional[str]], object],
           protocol: Optional[str]) -> JsonObject:
    out = {}
    for k, v in table.items():
        path = prefix + k
        if isinstance(v, dict) and prefix == "" and k != "transports":
            proto = v.get("protocol") if k == "transport" else None
            out[k] = _strip(v, path + ".", defaults, proto)
            continue
        scoped = path.startswith("transport.")
        default = defaults.get((path, protocol if scoped else None), defaults.get((path, None)))
        if default is _NO_DEFAULT or default is None or default != v:
            out[k] = v
    return out


_NO_DEFAULT = object()
_DEFAULTS: Optional[Dict[Tuple[str, Optional[str]], object]] = None


def _documented_defaults() -> Dict[Tuple[str, Optional[str]], object]:
    """(path, protocol scope) -> default value, from the core's parameter table; parameters
    without a literal default (required, unset, derived) map to _NO_DEFAULT."""
    global _DEFAULTS
    if _DEFAULTS is None:
        from .. import _core

        table: Dict[Tuple[str, Optional[str]], object] = {}
        for p in json.loads(_core.describe())["params"]:
            try:
                value = json.loads(p["default"]) if p["default"] is not None else _NO_DEFAULT
            except (TypeError, ValueError):
                value = _NO_DEFAULT  # 'unset', or a rule in words
            table[(p["path"], p["scope"])] = value
        _DEFAULTS = table
    return _DEFAULTS


def _claim_owner(text: bytes) -> Optional[ClaimOwner]:
    """The claim's {host, pid}, or None when the file is not a claim."""
    try:
        doc = parse_json(text)
        check_fields(doc, {"host": str, "pid": "whole number"})
    except ValueError:
        return None
    owner = cast(ClaimOwner, doc)  # checked just above
    return owner if 0 < owner["pid"] < 2**31 else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Store:
    def __init__(self, root: StrPath, create: bool = True) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"
        if create:
            self.runs.mkdir(parents=True, exist_ok=True)

    @classmethod
    def open(cls, root: StrPath) -> Store:
        """An existing store, for reading; a UsageError saying what DIR should hold otherwise."""
        p = Path(root)
        if not p.is_dir():
            raise UsageError(f"{p} is not a directory (expected the --out directory of `dcnsim sweep` or `dcnsim run`)")
        store = cls(p, create=False)
        if not (p / "sweep.json").exists() and not store.single_run:
            raise UsageError(f"{p} holds no results: expected sweep.json (written by `dcnsim sweep --out {p}`) "
                             f"or summary.json (written by `dcnsim run --out {p}`)")
        return store

    @property
    def single_run(self) -> bool:
        """A directory written by `dcnsim run` / Result.save: one run, no sweep.json."""
        return not (self.root / "sweep.json").exists() and (self.root / "summary.json").exists()

    def run_dir(self, key: str) -> Path:
        return self.root if key == SINGLE_RUN_KEY else self.runs / key

    def install(self, tmp: Path, key: str) -> None:
        """Moves a run written whole into `tmp` (with its DONE) into place, and clears an earlier
        failure. Whatever held the place (a stale partial directory, or a summary-only run a full one
        replaces) is renamed aside first and deleted after, so a finished run is never absent."""
        final, old = self.run_dir(key), self.runs / f".old-{key}-{os.getpid()}"
        if final.exists():
            os.rename(final, old)
        os.rename(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
        (self.runs / f"{key}.failed").unlink(missing_ok=True)

    def satisfies(self, key: str, flow_table: bool) -> bool:
        """Finished, undamaged, and with a flow table if one is wanted."""
        return self.is_done(key) and not (flow_table and summary_only(self.run_dir(key))) \
            and self.damage(key) is None

    def is_done(self, key: str) -> bool:
        """Whether the run was finished (its files may still be damaged: see `damage`)."""
        if key == SINGLE_RUN_KEY:
            return (self.root / "summary.json").exists()
        return (self.runs / key / "DONE").exists()

    def damage(self, key: str) -> Optional[Damaged]:
        """Why a finished run cannot be used (the file and the reason), or None when every file
        of it checks out (see checks.py)."""
        try:
            check_run(self.run_dir(key), single_run=key == SINGLE_RUN_KEY)
        except Damaged as e:
            return _relative(e, self.root)
        return None

    def summary(self, key: str) -> JsonObject:
        """A finished run's checked summary; Damaged naming the file otherwise."""
        try:
            return check_run(self.run_dir(key), single_run=key == SINGLE_RUN_KEY)
        except Damaged as e:
            raise _relative(e, self.root) from None

    def done_record(self, key: str) -> JsonObject:
        """The run's DONE record ({} for a `dcnsim run` directory or a damaged record)."""
        if key == SINGLE_RUN_KEY:
            return {}
        try:
            return read_json_object(self.runs / key / "DONE")
        except Damaged:
            return {}

    def finished_keys(self) -> List[str]:
        """Every run directory with a DONE record, by name (damaged ones too)."""
        if self.single_run or not self.runs.is_dir():
            return []
        return sorted(d.name for d in self.runs.iterdir() if not d.name.startswith(".") and (d / "DONE").exists())

    def other_builds(self) -> Dict[str, List[Tuple[str, Optional[str]]]]:
        """Finished runs made by another build of the core (or by an unknown one), by spec key:
        spec key -> [(run key, build or None)]."""
        here = build_id()
        found: Dict[str, List[Tuple[str, Optional[str]]]] = {}
        for key in self.finished_keys():
            done = self.done_record(key)
            recorded_build, recorded_key = done.get("build"), done.get("spec_key")
            build = recorded_build if isinstance(recorded_build, str) else None
            if build == here:
                continue
            spec_key_ = recorded_key if isinstance(recorded_key, str) else key
            found.setdefault(spec_key_, []).append((key, build))
        return found

    def rekey(self) -> int:
        """Renames each finished run whose directory is not the key its stored resolved spec gives
        now (stored under an earlier key rule, or before a parameter was added at its default), so
        it stays found (under the key of the build its DONE records). Runs naming files (their
        contents may have changed since), of another version or damaged are left alone. A rename
        is atomic; losing a race is harmless. Returns the renames."""
        renamed = 0
        for name in self.finished_keys():
            d = self.runs / name
            try:
                summary = read_json_object(d / "summary.json")
            except Damaged:
                continue  # reported by `damage`, run again by the next sweep
            resolved = summary.get("spec")
            if summary.get("version") != __version__ or not isinstance(resolved, dict) or named_files(resolved):
                continue
            try:
                spec_key_ = _key_of_resolved(resolved, __version__)
            except (TypeError, ValueError):
                continue
            build = self.done_record(name).get("build")
            key = build_key(spec_key_, build if isinstance(build, str) else None)
            if key != d.name and not (self.runs / key).exists():
                with contextlib.suppress(OSError):
                    os.rename(d, self.runs / key)
                    renamed += 1
        return renamed

    def failure(self, key: str) -> Optional[FailureRecord]:
        """The recorded failure {error, message, field} of a run, None when there is none; a
        damaged record reads as a failure saying so (the next sweep runs the run again)."""
        p = self.runs / f"{key}.failed"
        if not p.exists():
            return None
        try:
            return cast(FailureRecord, read_json_object(p, {"error": str, "message": str}))  # checked
        except Damaged as e:
            return {"error": "DamagedRecord", "message": f"{_relative(e, self.root)}", "field": None}

    def failure_time(self, key: str) -> float:
        try:
            return (self.runs / f"{key}.failed").stat().st_mtime
        except OSError:
            return 0.0

    def record_failure(self, key: str, e: BaseException) -> RunStatus:
        info: FailureRecord = {"error": type(e).__name__, "message": str(e), "field": getattr(e, "field", None)}
        tmp = self.runs / f".{key}.failed.{os.getpid()}"
        write_text(tmp, json.dumps(info))
        os.replace(tmp, self.runs / f"{key}.failed")
        return {"key": key, "status": "failed", **info}

    # Sweep definitions: every sweep run into the directory is kept (keyed by its definition).

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Serializes updates of sweep.json (re-entrant within a process: read_sweeps heals the
        index inside add_sweep's lock)."""
        if getattr(self, "_holding_lock", False):
            yield
            return
        with open(self.root / ".lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            self._holding_lock = True
            try:
                yield
            finally:
                self._holding_lock = False
                fcntl.flock(fh, fcntl.LOCK_UN)

    #: Set by read_sweeps when sweep.json was damaged and rebuilt from the runs: the reason.
    index_damage: Optional[Damaged] = None

    def read_sweeps(self) -> List[SweepEntry]:
        """Every sweep stored here, oldest first: {name, definition, runs}. A damaged sweep.json
        is kept aside as sweep.json.damaged and rebuilt from the runs (see `index_damage`)."""
        p = self.root / "sweep.json"
        if not p.exists():
            return []
        try:
            return sweeps_of(read_json_object(p))
        except Damaged as e:
            self.index_damage = _relative(e, self.root)
        try:
            return self._rebuild_sweeps()
        except OSError:  # a read-only store: the rebuilt index is used, not written
            return self.sweeps_from_runs()

    def _rebuild_sweeps(self) -> List[SweepEntry]:
        p = self.root / "sweep.json"
        with self._locked():
            try:  # another process may have rebuilt it meanwhile
                return sweeps_of(read_json_object(p))
            except Damaged:
                pass
            sweeps = self.sweeps_from_runs()
            os.replace(p, self.root / "sweep.json.damaged")
            self._write_sweeps(sweeps)
        return sweeps

    def sweeps_from_runs(self) -> List[SweepEntry]:
        """The sweep index as the finished runs record it: each run under the sweep that asked
        for it (DONE's `sweep`), runs of earlier versions (which record none) under "recovered"."""
        by_name: Dict[str, List[RunEntry]] = {}
        for key in self.finished_keys():
            tag = self.done_record(key).get("sweep")
            if not (isinstance(tag, dict) and isinstance(tag.get("name"), str) and isinstance(tag.get("axes"), dict)):
                tag = {"name": "recovered", "axes": {}}
            by_name.setdefault(tag["name"], []).append({"key": key, "axes": tag["axes"]})
        sweeps: List[SweepEntry] = []
        for name, runs in by_name.items():
            axes: Dict[str, List[object]] = {}
            for run in runs:
                for axis, value in run["axes"].items():
                    values = axes.setdefault(axis, [])
                    if canonical(value) not in map(canonical, values):
                        values.append(value)
            definition = {"name": name, "axes": axes, "rebuilt_from_runs": True}
            sweeps.append(json.loads(canonical({"name": name, "definition": definition, "runs": runs})))
        return sweeps

    def add_sweep(self, name: str, definition: JsonObject, runs: List[RunEntry]) -> None:
        """Records a sweep; one with the same definition (or an entry of the same name rebuilt
        from the runs) is recorded once, other sweeps stay."""
        with self._locked():
            sweeps = self.read_sweeps()
            entry = json.loads(canonical({"name": name, "definition": definition, "runs": runs}))
            same = [i for i, s in enumerate(sweeps) if canonical(s["definition"]) == canonical(entry["definition"])
                    or (s["definition"].get("rebuilt_from_runs") and s["name"] == name)]
            if same:
                sweeps[same[0]] = entry
            else:
                sweeps.append(entry)
            self._write_sweeps(sweeps)

    def _write_sweeps(self, sweeps: List[SweepEntry]) -> None:
        tmp = self.root / f".sweep.json.{os.getpid()}"
        write_text(tmp, json.dumps({"sweeps": sweeps}, indent=1, sort_keys=True))
        os.replace(tmp, self.root / "sweep.json")

    # Claims: who is simulating a run right now.

    def _claim_path(self, key: str) -> Path:
        return self.runs / f"{key}.claim"

    def claim(self, key: str) -> bool:
        """Takes the run for this process; False if a live owner holds it."""
        import socket

        p = self._claim_path(key)
        me = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "since": time.time()})
        for _ in range(3):
            try:
                fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not self.claim_is_stale(key):
                    return False
                # Move the dead owner's claim aside (atomic) and try again. Two sweeps taking over the
                # same dead claim at the same instant may both simulate the run: harmless, rare.
                with contextlib.suppress(OSError):
                    os.rename(p, self.runs / f".{key}.stale-claim.{os.getpid()}")
                    os.unlink(self.runs / f".{key}.stale-claim.{os.getpid()}")
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(me)
            return True
        return False

    def claimed(self, key: str) -> bool:
        """Whether a live owner is simulating the run."""
        return self._claim_path(key).exists() and not self.claim_is_stale(key)

    def claim_is_stale(self, key: str) -> bool:
        """Whether the claim's owner is gone: no heartbeat for STALE_CLAIM_S, a dead pid on this
        host, or a file that is not a claim (garbage; empty for longer than its owner takes to
        write it)."""
        p = self._claim_path(key)
        try:
            age = time.time() - p.stat().st_mtime
            text = p.read_bytes()
        except FileNotFoundError:
            return True
        except OSError:
            return False  # unreadable here (permissions): assume a live owner elsewhere
        if age > STALE_CLAIM_S:
            return True  # no heartbeat
        if not text:
            return age > CLAIM_WRITE_S  # created exclusively, then written: empty only for an instant
        owner = _claim_owner(text)
        if owner is None:
            return True  # garbage: no owner could have written it
        import socket

        if owner.get("host") == socket.gethostname():
            return not _pid_alive(owner["pid"])
        return False

    def release(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._claim_path(key))

    @contextlib.contextmanager
    def heartbeat(self, key: str) -> Iterator[None]:
        """Touches the claim every HEARTBEAT_S while the body runs, so other hosts see it alive."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_S):
                with contextlib.suppress(OSError):
                    os.utime(self._claim_path(key))

        t = threading.Thread(target=beat, name="dcnsim-claim-heartbeat", daemon=True)
        t.start()
        try:
            yield
        finally:
            stop.set()

    def log_executed(self, key: str) -> None:
        with naming(self.root / "executed.log"), open(self.root / "executed.log", "a") as f:
            f.write(f"{key} {time.time():.3f}\n")

    def executed(self) -> List[str]:
        """Keys of the simulations completed here, oldest first (lines that are not a record, as a
        cut-off last line, are skipped)."""
        p = self.root / "executed.log"
        if not p.exists():
            return []
        lines = p.read_bytes().decode(errors="replace").splitlines()
        return [parts[0] for parts in map(str.split, lines) if len(parts) == 2 and _KEY_TEXT.match(parts[0])]




_KEY_TEXT = re.compile(r"^[0-9a-f]{8,64}$")

#: A sweep entry of sweep.json: its name, definition (as given) and runs (key + axis values).
SWEEP_ENTRY = {"name": str, "definition": dict, "runs": [{"key": str, "axes": dict}]}


def sweeps_of(doc: JsonObject) -> List[SweepEntry]:
    """The sweep entries of a sweep.json document, checked; Damaged-free ValueError otherwise."""
    if "sweeps" not in doc and "definition" in doc:  # the one-sweep format of earlier versions
        definition = doc["definition"]
        name = definition.get("name", "sweep") if isinstance(definition, dict) else None
        doc = {"sweeps": [{"name": name, "definition": definition, "runs": doc.get("runs")}]}
    try:
        check_fields(doc, {"sweeps": [SWEEP_ENTRY]})
    except ValueError as e:
        raise Damaged("sweep.json", str(e)) from None
    sweeps = cast(List[SweepEntry], doc["sweeps"])  # checked just above
    for n, entry in enumerate(sweeps):
        bad = [r["key"] for r in entry["runs"] if not _KEY_TEXT.match(r["key"])]
        if bad:
            raise Damaged("sweep.json", f"sweeps[{n}] lists a run key that is not a key: {bad[0][:40]!r}")
    return sweeps


def _relative(e: Damaged, root: Path) -> Damaged:
    """The same damage with the file named relative to the store (runs/<key>/summary.json)."""
    try:
        name = str(Path(e.file).relative_to(root))
    except ValueError:
        name = e.file
    return Damaged(name, e.reason)


def summary_only(run_dir: Path) -> bool:
    """Whether a finished run has no flow table: made with `flow_tables = false`, or unpacked from
    a summary pack (which has no queue tables either)."""
    try:
        done = json.loads((run_dir / "DONE").read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(done, dict) and done.get("summary_only") is True


def done_record(result: Result, flow_table: bool, spec: JsonObject, sweep_tag: Optional[SweepTag]) -> JsonObject:
    """What DONE records: when, the build that made the run, the spec key (to find the run from
    another build) and the sweep that asked for it (to rebuild sweep.json from the runs)."""
    done: JsonObject = {"finished": time.time(), "wall_time_s": result.summary["wall_time_s"], "build": build_id(),
            "build_git": build_git(), "spec_key": spec_key(spec)}
    if sweep_tag is not None:
        done["sweep"] = sweep_tag
    return done if flow_table else {**done, "summary_only": True}


def execute(root: str, key: str, spec: JsonObject, flow_table: bool = True,
            sweep_tag: Optional[SweepTag] = None) -> RunStatus:
    """Simulates one run into the store, with its flow table or (`flow_table=False`) without. A
    finished run counts unless it lacks a flow table that is wanted or is damaged: it is then run
    again. `sweep_tag` ({name, axes}) is recorded in DONE. Runs in a
    worker process or a Ray task. Never raises (except on Ctrl-C): any failure, a panic in the core
    included, is recorded and reported. Returns status "done", "failed", or "busy" when another
    live sweep is simulating the run."""
    from .. import spec as spec_module
    from ..spec import run

    stop = spec_module.external_stop()
    if stop is not None and stop.is_set():  # the sweep was interrupted: queued tasks end at once
        raise KeyboardInterrupt
    store = Store(root)
    if store.satisfies(key, flow_table):
        return {"key": key, "status": "done", "cached": True}
    if not store.claim(key):
        return {"key": key, "status": "busy"}
    tmp = store.runs / f".tmp-{key}-{os.getpid()}"
    try:
        if store.satisfies(key, flow_table):  # finished by another sweep between the check and the claim
            return {"key": key, "status": "done", "cached": True}
        shutil.rmtree(tmp, ignore_errors=True)
        with store.heartbeat(key):
            result = run(spec, flows=flow_table)
            result.save(tmp, plot=False, derived=False)  # load_flows restores the us columns
        write_text(tmp / "spec.json", json.dumps(spec, indent=1, sort_keys=True))
        write_text(tmp / "DONE", json.dumps(done_record(result, flow_table, spec, sweep_tag)))
        store.install(tmp, key)
        store.log_executed(key)
        return {"key": key, "status": "done", "cached": False}
    except (KeyboardInterrupt, SystemExit):
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except BaseException as e:  # record any failure (a panic in the core too); the sweep goes on
        shutil.rmtree(tmp, ignore_errors=True)
        return store.record_failure(key, e)
    finally:
        store.release(key)
