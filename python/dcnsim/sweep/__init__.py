"""Sweeps: many runs from one definition, executed locally or on Ray, stored so nothing finished
is ever lost or recomputed, and loaded back as one table.

    import dcnsim
    df = dcnsim.sweep("base.toml", {"workload[0].load": [0.3, 0.5, 0.7], "seed": [1, 2]}, out="results/")
    df = dcnsim.results("results/")          # one row per run: axes + summary metrics
    flows = dcnsim.sweep_flows("results/", df.key[0])
"""

from __future__ import annotations

import json
from typing import Optional

import pandas as pd

from .executors import run_local, run_ray
from .progress import Progress
from .spec import SweepSpec, as_sweep, compile_filter, load_sweep
from .store import Store, run_key

__all__ = ["sweep", "run_sweep", "results", "load_flows", "load_sweep", "SweepSpec", "run_key", "compile_filter"]


def run_sweep(spec: SweepSpec, out, executor: str = "local", workers: Optional[int] = None,
              address: Optional[str] = None, quiet: bool = False) -> pd.DataFrame:
    """Runs every run of `spec` not already finished in `out`; returns `results(out)`."""
    store = Store(out)
    runs = spec.runs()
    keyed = [(run_key(s), values, s) for values, s in runs]
    store.write_sweep(spec.to_dict(), [{"key": k, "axes": v} for k, v, _ in keyed])
    todo, seen = [], set()
    for k, _, s in keyed:
        if not store.is_done(k) and k not in seen:
            todo.append((k, s))
            seen.add(k)
    progress = Progress(total=len(keyed), cached=len(keyed) - len(todo), quiet=quiet)
    progress.show()
    try:
        if executor == "local":
            run_local(str(store.root), todo, workers, progress.finish, progress.start)
        elif executor == "ray":
            run_ray(str(store.root.resolve()), todo, address, progress.finish, progress.start)
        else:
            raise ValueError(f"unknown executor {executor!r}: expected 'local' or 'ray'")
    finally:
        progress.close()
    return results(out)


def sweep(base, axes=None, out="sweep-out", filter: Optional[str] = None, name: str = "sweep",
          **kwargs) -> pd.DataFrame:
    """Expands `base` (a spec dict, TOML path or text) over `axes` and runs it; see `run_sweep`."""
    return run_sweep(as_sweep(base, axes, filter, name), out, **kwargs)


def flatten_summary(s: dict) -> dict:
    """The summary metrics a sweep table carries, one column each."""
    q = s["queues"]
    row = {
        "protocol": s["protocol"],
        "hosts": s["hosts"],
        "goodput_gbps": s["goodput_gbps"],
        "goodput_normalized": s["goodput_normalized"],
        "goodput_per_host_gbps": s["goodput_per_host_gbps"],
        "offered_load_gbps": s["offered_load_gbps"],
        "offered_window_gbps": s["offered_window_gbps"],
        "flows_started": s["flows"]["started"],
        "flows_finished": s["flows"]["finished"],
        "slowdown_median": s["slowdown"]["median"],
        "slowdown_p99": s["slowdown"]["p99"],
        "slowdown_mean": s["slowdown"]["mean"],
        "max_switch_bytes": q["max_switch_bytes"],
        "mean_switch_bytes_max": q["mean_switch_bytes_max"],
        "switch_bytes_at_end": q["switch_bytes_at_end"],
        "drops": q["drops"],
        "ecn_marks": q["ecn_marks"],
        "trims": q["trims"],
        "bdp_bytes": s["bdp_bytes"],
        "window_ps": s["window_ps"],
        "events": s["events"],
        "wall_time_s": s["wall_time_s"],
    }
    for tier, v in q["max_switch_bytes_by_tier"].items():
        row[f"max_switch_bytes_{tier}"] = v
    for tier, v in q["mean_switch_bytes_by_tier"].items():
        row[f"mean_switch_bytes_{tier}"] = v
    for g in s["slowdown_by_size"]:
        row[f"slowdown_{g['group']}_median"] = g["median"]
        row[f"slowdown_{g['group']}_p99"] = g["p99"]
        row[f"size_group_{g['group']}"] = g["label"]
    return row


def results(out) -> pd.DataFrame:
    """One row per run of the sweep stored in `out`: key, status, error, axis values, metrics."""
    store = Store(out)
    sweep_doc = store.read_sweep()
    rows = []
    for r in sweep_doc["runs"]:
        key = r["key"]
        row = {"key": key, **r["axes"]}
        if store.is_done(key):
            row["status"] = "done"
            row.update(flatten_summary(json.loads((store.run_dir(key) / "summary.json").read_text())))
        elif store.failure(key):
            f = store.failure(key)
            row.update(status="failed", error=f"{f['error']}: {f['message']}")
        else:
            row["status"] = "missing"
        rows.append(row)
    return pd.DataFrame(rows)


def load_flows(out, key: str) -> pd.DataFrame:
    """The per-flow table of one finished run."""
    return pd.read_parquet(Store(out).run_dir(key) / "flows.parquet")


def load_summary(out, key: str) -> dict:
    return json.loads((Store(out).run_dir(key) / "summary.json").read_text())
