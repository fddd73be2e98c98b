"""The results store: one directory per run, named by a key derived from the run's resolved spec.

DIR/
  sweep.json            the sweep definition and its runs (key + axis values)
  runs/<key>/           a finished run: flows/queues/switches.parquet, summary.json, spec.json, DONE
  runs/<key>.failed     a failed run: error type and message (JSON); retried on the next attempt
  runs/.tmp-<key>-<pid> a run being written; renamed into place only when complete
  executed.log          one line per run actually simulated (for audits and tests)

A run counts as finished only when its directory exists with DONE inside; the directory appears by
an atomic rename, so a killed writer leaves at most a stray temp directory, never a half run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Optional

from .. import __version__
from ..spec import resolve


def canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _file_digest(path: str) -> Optional[str]:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def run_key(spec: dict) -> str:
    """Key of a run: the resolved spec (defaults filled in, so key order and spelt-out defaults do
    not matter), the contents of files it names, and the software version."""
    resolved = resolve(spec)
    files = {}
    for w in resolved.get("workload", []):
        for k in ("path", "cdf"):
            v = w.get(k)
            if isinstance(v, str) and ("/" in v or v.endswith(".cdf")):
                files[v] = _file_digest(v)
    doc = canonical({"spec": resolved, "files": files, "version": __version__})
    return hashlib.sha256(doc.encode()).hexdigest()[:20]


class Store:
    def __init__(self, root):
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.runs.mkdir(parents=True, exist_ok=True)

    def run_dir(self, key: str) -> Path:
        return self.runs / key

    def is_done(self, key: str) -> bool:
        return (self.runs / key / "DONE").exists()

    def failure(self, key: str) -> Optional[dict]:
        p = self.runs / f"{key}.failed"
        return json.loads(p.read_text()) if p.exists() else None

    def write_sweep(self, definition: dict, runs: list) -> None:
        tmp = self.root / f".sweep.json.{os.getpid()}"
        tmp.write_text(json.dumps({"definition": definition, "runs": runs}, indent=1, sort_keys=True, default=str))
        os.replace(tmp, self.root / "sweep.json")

    def read_sweep(self) -> dict:
        return json.loads((self.root / "sweep.json").read_text())

    def log_executed(self, key: str) -> None:
        with open(self.root / "executed.log", "a") as f:
            f.write(f"{key} {time.time():.3f}\n")

    def executed(self) -> list:
        p = self.root / "executed.log"
        return [line.split()[0] for line in p.read_text().splitlines()] if p.exists() else []


def execute(root: str, key: str, spec: dict) -> dict:
    """Simulates one run into the store. Runs in a worker process or a Ray task. Never raises:
    failures are recorded and reported."""
    from ..spec import run

    store = Store(root)
    if store.is_done(key):
        return {"key": key, "status": "done", "cached": True}
    store.log_executed(key)
    tmp = store.runs / f".tmp-{key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        result = run(spec)
        result.save(tmp, plot=False)
        (tmp / "spec.json").write_text(json.dumps(spec, indent=1, sort_keys=True))
        (tmp / "DONE").write_text(json.dumps({"finished": time.time(), "wall_time_s": result.summary["wall_time_s"]}))
        final = store.run_dir(key)
        shutil.rmtree(final, ignore_errors=True)  # a stale partial directory can never be DONE
        os.rename(tmp, final)
        (store.runs / f"{key}.failed").unlink(missing_ok=True)
        return {"key": key, "status": "done", "cached": False}
    except Exception as e:  # record any failure; the sweep goes on
        shutil.rmtree(tmp, ignore_errors=True)
        info = {"error": type(e).__name__, "message": str(e), "field": getattr(e, "field", None)}
        (store.runs / f"{key}.failed").write_text(json.dumps(info))
        return {"key": key, "status": "failed", **info}
