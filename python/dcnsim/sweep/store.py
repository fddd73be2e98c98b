"""The results store: one directory per run, named by a key derived from the run's resolved spec.

DIR/
  sweep.json            every sweep run into DIR: its name, definition and runs (key + axis values)
  runs/<key>/           a finished run: flows/queues/switches.parquet, summary.json, spec.json, DONE
  runs/<key>.failed     a failed run: error type and message (JSON); retried on the next attempt
  runs/<key>.claim      a run being simulated: the owner's host and pid (JSON), touched every 30 s
  runs/.tmp-<key>-<pid> a run being written; renamed into place only when complete
  .lock                 serializes updates of sweep.json
  executed.log          one line per simulation completed here (for audits and tests)

A run counts as finished only when its directory exists with DONE inside; the directory appears by
an atomic rename, so a killed writer leaves at most a stray temp directory, never a half run.
A run is claimed (a file created exclusively) before it is simulated, so sweeps sharing DIR never
simulate it twice; a claim whose owner died (same host: its pid is gone; any host: no heartbeat
for STALE_CLAIM_S) is taken over. A directory written by `dcnsim run` (summary.json, no sweep.json)
reads as a store of one run whose key is ".".
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import List, Optional

from .. import __version__
from ..errors import UsageError
from ..spec import resolve

HEARTBEAT_S = 30.0
STALE_CLAIM_S = 120.0
SINGLE_RUN_KEY = "."


def canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)


def _file_digest(path: str) -> Optional[str]:
    import hashlib  # OpenSSL: 4 MB and milliseconds that `import dcnsim` need not pay

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def named_files(resolved: dict) -> List[str]:
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


def run_key(spec: dict) -> str:
    """Key of a run: the resolved spec without the keys at their documented defaults (so key order,
    spelt-out defaults and keys a later version adds with behaviour-preserving defaults do not
    matter), the contents of every file it names, and the software version."""
    return _key_of_resolved(resolve(spec), __version__)


def _key_of_resolved(resolved: dict, version: str) -> str:
    import hashlib

    files = {f: _file_digest(f) for f in named_files(resolved)}
    doc = canonical({"spec": without_defaults(resolved), "files": files, "version": version})
    return hashlib.sha256(doc.encode()).hexdigest()[:20]


def without_defaults(resolved: dict) -> dict:
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


def _strip(table: dict, prefix: str, defaults: dict, protocol) -> dict:
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
_DEFAULTS: Optional[dict] = None


def _documented_defaults() -> dict:
    """(path, protocol scope) -> default value, from the core's parameter table; parameters
    without a literal default (required, unset, derived) map to _NO_DEFAULT."""
    global _DEFAULTS
    if _DEFAULTS is None:
        from .. import _core

        table = {}
        for p in json.loads(_core.describe())["params"]:
            try:
                value = json.loads(p["default"]) if p["default"] is not None else _NO_DEFAULT
            except (TypeError, ValueError):
                value = _NO_DEFAULT  # 'unset', or a rule in words
            table[(p["path"], p["scope"])] = value
        _DEFAULTS = table
    return _DEFAULTS


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Store:
    def __init__(self, root, create: bool = True):
        self.root = Path(root)
        self.runs = self.root / "runs"
        if create:
            self.runs.mkdir(parents=True, exist_ok=True)

    @classmethod
    def open(cls, root) -> "Store":
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
        """Finished, and with a flow table if one is wanted."""
        return self.is_done(key) and not (flow_table and summary_only(self.run_dir(key)))

    def is_done(self, key: str) -> bool:
        if key == SINGLE_RUN_KEY:
            return (self.root / "summary.json").exists()
        return (self.runs / key / "DONE").exists()

    def rekey(self) -> int:
        """Renames each finished run whose directory is not the key its stored resolved spec gives
        now (stored under an earlier key rule, or before a parameter was added at its default), so
        it stays found. Runs naming files (their contents may have changed since) or of another
        version are left alone. A rename is atomic; losing a race is harmless. Returns the renames."""
        if self.single_run or not self.runs.is_dir():
            return 0
        renamed = 0
        for d in self.runs.iterdir():
            if d.name.startswith(".") or not (d / "DONE").exists():
                continue
            try:
                summary = json.loads((d / "summary.json").read_text())
            except (OSError, ValueError):
                continue
            resolved = summary.get("spec")
            if summary.get("version") != __version__ or not isinstance(resolved, dict) or named_files(resolved):
                continue
            key = _key_of_resolved(resolved, __version__)
            if key != d.name and not (self.runs / key).exists():
                with contextlib.suppress(OSError):
                    os.rename(d, self.runs / key)
                    renamed += 1
        return renamed

    def failure(self, key: str) -> Optional[dict]:
        p = self.runs / f"{key}.failed"
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError):
            return None

    def failure_time(self, key: str) -> float:
        try:
            return (self.runs / f"{key}.failed").stat().st_mtime
        except OSError:
            return 0.0

    def record_failure(self, key: str, e: BaseException) -> dict:
        info = {"error": type(e).__name__, "message": str(e), "field": getattr(e, "field", None)}
        tmp = self.runs / f".{key}.failed.{os.getpid()}"
        tmp.write_text(json.dumps(info))
        os.replace(tmp, self.runs / f"{key}.failed")
        return {"key": key, "status": "failed", **info}

    # Sweep definitions: every sweep run into the directory is kept (keyed by its definition).

    @contextlib.contextmanager
    def _locked(self):
        with open(self.root / ".lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def read_sweeps(self) -> list:
        """Every sweep stored here, oldest first: {name, definition, runs}."""
        p = self.root / "sweep.json"
        if not p.exists():
            return []
        doc = json.loads(p.read_text())
        if "sweeps" in doc:
            return doc["sweeps"]
        # The one-sweep format of earlier versions.
        return [{"name": doc["definition"].get("name", "sweep"), "definition": doc["definition"], "runs": doc["runs"]}]

    def add_sweep(self, name: str, definition: dict, runs: list) -> None:
        """Records a sweep; one with the same definition is recorded once, other sweeps stay."""
        with self._locked():
            sweeps = self.read_sweeps()
            entry = json.loads(canonical({"name": name, "definition": definition, "runs": runs}))
            same = [i for i, s in enumerate(sweeps) if canonical(s["definition"]) == canonical(entry["definition"])]
            if same:
                sweeps[same[0]] = entry
            else:
                sweeps.append(entry)
            tmp = self.root / f".sweep.json.{os.getpid()}"
            tmp.write_text(json.dumps({"sweeps": sweeps}, indent=1, sort_keys=True))
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
        p = self._claim_path(key)
        try:
            age = time.time() - p.stat().st_mtime
            owner = json.loads(p.read_text() or "{}")
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            owner = {}
            age = 0.0  # being written: its owner is alive
        if age > STALE_CLAIM_S:
            return True  # no heartbeat
        import socket

        if owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int):
            return not _pid_alive(owner["pid"])
        return False

    def release(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._claim_path(key))

    @contextlib.contextmanager
    def heartbeat(self, key: str):
        """Touches the claim every HEARTBEAT_S while the body runs, so other hosts see it alive."""
        stop = threading.Event()

        def beat():
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
        with open(self.root / "executed.log", "a") as f:
            f.write(f"{key} {time.time():.3f}\n")

    def executed(self) -> list:
        p = self.root / "executed.log"
        return [line.split()[0] for line in p.read_text().splitlines()] if p.exists() else []




def summary_only(run_dir: Path) -> bool:
    """Whether a finished run has no flow table: made with `flow_tables = false`, or unpacked from
    a summary pack (which has no queue tables either)."""
    done = run_dir / "DONE"
    try:
        return bool(json.loads(done.read_text()).get("summary_only"))
    except (OSError, ValueError):
        return False


def execute(root: str, key: str, spec: dict, flow_table: bool = True) -> dict:
    """Simulates one run into the store, with its flow table or (`flow_table=False`) without. A
    finished run counts unless it lacks a flow table that is wanted: it is then run again. Runs in a
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
        (tmp / "spec.json").write_text(json.dumps(spec, indent=1, sort_keys=True))
        done = {"finished": time.time(), "wall_time_s": result.summary["wall_time_s"]}
        (tmp / "DONE").write_text(json.dumps(done if flow_table else {**done, "summary_only": True}))
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
