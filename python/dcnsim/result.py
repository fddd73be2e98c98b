"""The result of a run: pandas tables, the summary, and writing them to disk.

A run's tables stay in the extension (`_core.RunOutput`) until asked for: `Result.flows` etc.
become DataFrames on first access (numpy wraps the column buffers, no Python object per row), and
`Result.save` writes the Parquet files from Rust. So running and saving import neither numpy,
pandas, pyarrow nor matplotlib (together about a second and 100 MB at start-up); reading a table,
the CSV and the plot do.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from .errors import naming, write_text

if TYPE_CHECKING:
    import pandas as pd

    from . import _core


def _column(kind: str, *data: Any) -> Any:
    """Rebuilds one column from the extension's encoding (see crates/dcnsim-py/src/lib.rs)."""
    import numpy as np
    import pandas as pd

    if kind == "u64":
        return np.frombuffer(data[0], dtype="<u8")
    if kind == "f64":
        return np.frombuffer(data[0], dtype="<f8")
    if kind == "bool":
        return np.frombuffer(data[0], dtype=np.uint8).astype(bool)
    if kind == "opt_u64":
        values = np.frombuffer(data[0], dtype="<u8").copy()  # IntegerArray wants a writable buffer
        missing = np.frombuffer(data[1], dtype=np.uint8).astype(bool)
        return pd.arrays.IntegerArray(values, missing)
    if kind == "cat":
        categories, codes = data
        return pd.Categorical.from_codes(np.frombuffer(codes, dtype="<u4").astype(np.int32), categories=categories)
    raise ValueError(f"unknown column encoding {kind!r}: dcnsim._core does not match this package")


def _frame(columns: dict) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({name: _column(*col) for name, col in columns.items()})


#: Flow-table times also given in microseconds (float; NaN where the flow did not finish).
MICROSECOND_COLUMNS = {"start_ps": "start_us", "end_ps": "end_us", "fct_ps": "fct_us", "ideal_fct_ps": "ideal_fct_us"}


def with_microseconds(flows: pd.DataFrame) -> pd.DataFrame:
    """Adds start_us, end_us, fct_us and ideal_fct_us after the other columns (exact ps stay).
    (crates/dcnsim-py/src/parquet_out.rs writes the same columns into saved flow tables.)"""
    import numpy as np

    for ps, us in MICROSECOND_COLUMNS.items():
        if ps in flows and us not in flows:
            flows[us] = flows[ps].to_numpy(dtype="float64", na_value=np.nan) / 1e6
    return flows


class _Table:
    """A table of a Result: a DataFrame built from the run's column buffers on first access (and
    kept), or whatever DataFrame was assigned."""

    def __init__(self, table: str):
        self.table = table  # the extension's name for it

    def __get__(self, obj: Optional[Result], owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        df = obj._frames.get(self.table)
        if df is None:
            df = obj._frames[self.table] = obj._build(self.table)
        return df

    def __set__(self, obj: Result, df: pd.DataFrame) -> None:
        obj._frames[self.table] = df


TRACE_COLUMNS = ["time_ps", "flow_id", "kind", "seq", "ack", "size_bytes", "node", "port_id", "event", "queue_bytes",
                 "priority_class"]
FLOW_STATE_COLUMNS = ["time_ps", "flow_id", "variable", "value"]
COLLECTIVE_COLUMNS = ["job", "iteration", "collective", "kind", "size_bytes", "start_ps", "end_ps", "ideal_ps",
                      "slowdown"]
ITERATION_COLUMNS = ["job", "iteration", "start_ps", "end_ps", "iteration_ps", "compute_ps", "communication_ps",
                     "exposed_communication_ps"]
#: Tables a run has only when its spec asks for them (a sample interval, a trace, a training job).
OPTIONAL_TABLES = ("timeseries", "trace", "flow_state", "collectives", "iterations")
#: The columns of a table a Result made from DataFrames was not given.
_EMPTY_COLUMNS = {"timeseries": ["time_ps", "series", "name", "value"], "trace": TRACE_COLUMNS,
                  "flow_state": FLOW_STATE_COLUMNS, "collectives": COLLECTIVE_COLUMNS,
                  "iterations": ITERATION_COLUMNS}


def _warn_if_truncated(summary: dict) -> None:
    t = summary.get("trace")
    if not t or not t.get("truncated"):
        return
    cut = [f"packet trace at {t['packet_truncated_at_ps'] / 1e6:.3f} us ({t['packet_rows_dropped']:,} rows left out)"
           if t.get("packet_truncated_at_ps") is not None else None,
           f"flow state at {t['state_truncated_at_ps'] / 1e6:.3f} us"
           if t.get("state_truncated_at_ps") is not None else None]
    warnings.warn(f"trace.max_rows = {t['max_rows']:,} cut the " + " and the ".join(c for c in cut if c)
                  + "; the tables end there", stacklevel=4)


class Result:
    """Tables and summary of one run.

    flows     one row per flow: flow_id, src, dst, size_bytes, start_ps, end_ps (nullable),
              fct_ps (nullable), ideal_fct_ps, slowdown (NaN if unfinished), workload, counted,
              window_bytes (payload delivered inside the measurement window), and the times again
              in microseconds: start_us, end_us, fct_us, ideal_fct_us (floats, NaN if unfinished)
    queues    one row per egress port: node, peer, role, tier, rate_gbps, max_bytes, mean_bytes,
              drops (by the queue), losses (by a lossy link, at its far end), ecn_marks, trims, bounces,
              tx_bytes, tx_packets, utilization
    switches  one row per switch: occupancy summed over its ports (max_bytes, mean_bytes), drops, marks
    timeseries  with metrics.sample_interval_us: time_ps, series ("switch_queue_bytes" per switch,
              "host_rx_gbps" per host over the last interval), name, value
    trace     with a [trace] table: every hop of every packet of the traced flows: time_ps,
              flow_id, kind, seq, ack, size_bytes, node, port_id, event (enqueue, drop, mark, trim,
              bounce, tx_start, arrive, deliver, lose), queue_bytes (waiting at the port, this packet
              not counted), priority_class
    flow_state  with a [trace] table: the traced flows' control state over time: time_ps,
              flow_id, variable (e.g. cwnd_bytes), value
    collectives  with training jobs (kind = "collective"): one row per collective run: job,
              iteration, collective (its index in the iteration), kind, size_bytes, start_ps,
              end_ps (nullable), ideal_ps (its exact ideal completion time), slowdown
    iterations  with training jobs: one row per iteration: job, iteration, start_ps, end_ps,
              iteration_ps, compute_ps, communication_ps, exposed_communication_ps
    summary   aggregates and provenance (spec, seed, version, wall time, events)
    spec      the spec with every default filled in
    """

    flows = _Table("flows")
    queues = _Table("ports")
    switches = _Table("switches")
    timeseries = _Table("timeseries")
    trace = _Table("trace")
    flow_state = _Table("flow_state")
    collectives = _Table("collectives")
    iterations = _Table("iterations")

    #: False for a run made with `flows=False`: it has no flow table (reading `flows` raises).
    has_flows = True

    def __init__(self, flows: pd.DataFrame, queues: pd.DataFrame, switches: pd.DataFrame, summary: dict, spec: dict,
                 timeseries: pd.DataFrame = None, trace: pd.DataFrame = None, flow_state: pd.DataFrame = None):
        self._output: Optional[_core.RunOutput] = None  # the extension's RunOutput, when the tables are still there
        self._frames: dict[str, pd.DataFrame] = {}
        self.flows = flows
        self.queues = queues
        self.switches = switches
        for name, df in (("timeseries", timeseries), ("trace", trace), ("flow_state", flow_state)):
            if df is not None:
                setattr(self, name, df)
        self.summary = summary
        self.spec = spec

    @classmethod
    def from_core(cls, output: _core.RunOutput, flows: bool = True) -> Result:
        """A Result over a `_core.RunOutput`: no table is converted until it is read. Without
        `flows`, the run was made without its flow table (`dcnsim.run(..., flows=False)`)."""
        from .build import build_info

        summary = json.loads(output.summary)
        summary["build"] = build_info()  # which build of the core made the run (dcnsim.build)
        _warn_if_truncated(summary)
        r = cls.__new__(cls)
        r._output, r._frames = output, {}
        r.has_flows = flows
        r.summary = summary
        r.spec = json.loads(output.spec)
        return r

    def __getstate__(self) -> dict:
        """Pickles (e.g. to return a Result from a worker process) with every table as a DataFrame:
        the extension's RunOutput cannot cross processes."""
        for name in ("flows", "queues", "switches", *OPTIONAL_TABLES):
            if name != "flows" or self.has_flows:
                getattr(self, name)
        return dict(self.__dict__, _output=None)

    def _build(self, table: str) -> pd.DataFrame:
        import pandas as pd

        if table == "flows" and not self.has_flows:
            from .errors import UsageError

            raise UsageError("this run was made with flows=False and has no flow table (its summary is complete); "
                             "run it again with flows=True for per-flow results")
        if self._output is None:
            return pd.DataFrame(columns=_EMPTY_COLUMNS[table])
        df = _frame(self._output.table(table))
        return with_microseconds(df) if table == "flows" else df

    def _rows(self, table: str) -> int:
        df = self._frames.get(table)
        if df is not None or self._output is None:
            return 0 if df is None else len(df)
        return self._output.rows(table)

    def provenance(self) -> dict:
        s = self.summary
        return {"spec": self.spec, "seed": s["seed"], "version": s["version"], "wall_time_s": s["wall_time_s"],
                "events": s["events"], "build": s.get("build")}

    def _metadata(self) -> dict:
        """Key-value metadata of every Parquet file: the provenance under `dcnsim.*`."""
        prov = self.provenance()
        meta = {"dcnsim.spec": json.dumps(prov["spec"], sort_keys=True), "dcnsim.seed": str(prov["seed"]),
                "dcnsim.version": str(prov["version"])}
        if isinstance(prov["build"], dict):
            meta["dcnsim.build"] = json.dumps(prov["build"], sort_keys=True)
        return meta

    def _write_parquet(self, table: str, path: Path, derived: bool = True) -> None:
        """From Rust while the table was never read as a DataFrame (the common case, and the same
        file), else from the DataFrame the caller may have changed."""
        if table not in self._frames and self._output is not None:
            # zstd: a third smaller than snappy on flow tables, and the sweep store holds millions of rows per run
            self._output.write_parquet(table, str(path), list(self._metadata().items()), derived and table == "flows")
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        df = self._frames[table] if table in self._frames else self._build(table)
        if table == "flows" and not derived:
            df = df.drop(columns=list(MICROSECOND_COLUMNS.values()), errors="ignore")
        t = pa.Table.from_pandas(df, preserve_index=False)
        meta = dict(t.schema.metadata or {})
        meta.update((k.encode(), v.encode()) for k, v in self._metadata().items())
        with naming(path):
            pq.write_table(t.replace_schema_metadata(meta), path, compression="zstd")

    def save(self, out_dir: Union[str, os.PathLike], plot: bool = True, csv: bool = False,
             derived: bool = True) -> Path:
        """Writes flows/queues/switches.parquet (timeseries.parquet when sampled, trace.parquet and
        flow_state.parquet when traced), summary.json and slowdown.png into out_dir, creating it.
        Every Parquet file carries the provenance (spec, seed, version) as key-value metadata under
        `dcnsim.*`. With `csv`, the flow table is also written as flows.csv. A run made with
        `flows=False` writes no flow table (and cannot plot or write the CSV). Without `derived`, the
        flow table leaves out the microsecond copies of the exact ps times (the sweep store does:
        `load_flows` adds them back), which is a third of its size. Without `plot` and `csv`, and
        with no table read as a DataFrame before, saving imports neither pandas nor matplotlib."""
        if not self.has_flows and (plot or csv):
            from .errors import UsageError

            raise UsageError("save(plot=..., csv=...) needs the flow table, which a run made with flows=False does "
                             "not have: save it with plot=False, csv=False")
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        rows = {}  # recorded in summary.json: reading the store checks each table against it
        if self.has_flows:
            self._write_parquet("flows", out / "flows.parquet", derived)
            rows["flows.parquet"] = self._rows("flows")
        if csv:
            with naming(out / "flows.csv"):
                self.flows.to_csv(out / "flows.csv", index=False)
        for table, name in (("ports", "queues"), ("switches", "switches")):
            self._write_parquet(table, out / f"{name}.parquet")
            rows[f"{name}.parquet"] = self._rows(table)
        for table in OPTIONAL_TABLES:
            if self._rows(table):
                self._write_parquet(table, out / f"{table}.parquet")
                rows[f"{table}.parquet"] = self._rows(table)
        saved = {**self.summary, "table_rows": rows}
        write_text(out / "summary.json", json.dumps(saved, indent=2, sort_keys=True) + "\n")
        if plot:
            from .plots import slowdown_by_size

            with naming(out / "slowdown.png"):
                slowdown_by_size(self.summary, self.flows, out / "slowdown.png")
        return out

    def save_replacing(self, out_dir: Union[str, os.PathLike], **save_options: bool) -> Path:
        """`save`, so that out_dir never shows a finished run with a table it cannot read: the
        files are written into a temporary directory beside it first (a full disk fails there,
        leaving an earlier run in out_dir whole), then moved in, summary.json last and the earlier
        summary.json removed first. Files in out_dir that a run does not write are kept."""
        import os
        import shutil

        out = Path(out_dir)
        tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            self.save(tmp, **save_options)
            _move_run_into(tmp, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return out

    def __repr__(self) -> str:
        f = self.summary["flows"]
        return f"<dcnsim.Result {self.summary.get('protocol')} flows={f['started']} finished={f['finished']}>"


#: Every file `Result.save` may write (an earlier run's that the new run does not write go).
RUN_FILES = {"flows.parquet", "queues.parquet", "switches.parquet", "timeseries.parquet", "trace.parquet",
             "flow_state.parquet", "collectives.parquet", "iterations.parquet", "flows.csv", "summary.json",
             "slowdown.png", "slowdown.pdf"}


def _move_run_into(tmp: Path, out: Path) -> None:
    """Moves the run written whole into `tmp` to `out` (renames within one filesystem: no space
    needed). While the files move, `out` has no summary.json, so it never reads as a finished run
    made of two runs' files."""
    import os

    if not out.exists():
        os.rename(tmp, out)
        return
    (out / "summary.json").unlink(missing_ok=True)
    written = {p.name for p in tmp.iterdir()}
    for name in RUN_FILES - written:
        (out / name).unlink(missing_ok=True)
    for p in sorted(tmp.iterdir(), key=lambda p: p.name == "summary.json"):
        os.replace(p, out / p.name)
