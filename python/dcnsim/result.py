"""The result of a run: pandas tables, the summary, and writing them to disk."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def _column(kind: str, *data: Any):
    """Rebuilds one column from the extension's encoding (see crates/dcnsim-py/src/lib.rs)."""
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
    return pd.DataFrame({name: _column(*col) for name, col in columns.items()})


#: Flow-table times also given in microseconds (float; NaN where the flow did not finish).
MICROSECOND_COLUMNS = {"start_ps": "start_us", "end_ps": "end_us", "fct_ps": "fct_us", "ideal_fct_ps": "ideal_fct_us"}


def with_microseconds(flows: pd.DataFrame) -> pd.DataFrame:
    """Adds start_us, end_us, fct_us and ideal_fct_us after the other columns (exact ps stay)."""
    for ps, us in MICROSECOND_COLUMNS.items():
        if ps in flows and us not in flows:
            flows[us] = flows[ps].to_numpy(dtype="float64", na_value=np.nan) / 1e6
    return flows


TRACE_COLUMNS = ["time_ps", "flow_id", "kind", "seq", "ack", "size_bytes", "node", "port_id", "event", "queue_bytes",
                 "priority_class"]
FLOW_STATE_COLUMNS = ["time_ps", "flow_id", "variable", "value"]


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
    summary   aggregates and provenance (spec, seed, version, wall time, events)
    spec      the spec with every default filled in
    """

    def __init__(self, flows: pd.DataFrame, queues: pd.DataFrame, switches: pd.DataFrame, summary: dict, spec: dict,
                 timeseries: pd.DataFrame = None, trace: pd.DataFrame = None, flow_state: pd.DataFrame = None):
        self.flows = flows
        self.timeseries = (timeseries if timeseries is not None
                           else pd.DataFrame(columns=["time_ps", "series", "name", "value"]))
        self.trace = trace if trace is not None else pd.DataFrame(columns=TRACE_COLUMNS)
        self.flow_state = flow_state if flow_state is not None else pd.DataFrame(columns=FLOW_STATE_COLUMNS)
        self.queues = queues
        self.switches = switches
        self.summary = summary
        self.spec = spec

    @classmethod
    def from_raw(cls, raw: dict) -> "Result":
        summary = json.loads(raw["summary"])
        _warn_if_truncated(summary)
        return cls(
            with_microseconds(_frame(raw["flows"])),
            _frame(raw["ports"]),
            _frame(raw["switches"]),
            summary,
            json.loads(raw["spec"]),
            _frame(raw["timeseries"]),
            _frame(raw["trace"]),
            _frame(raw["flow_state"]),
        )

    def provenance(self) -> dict:
        s = self.summary
        return {"spec": self.spec, "seed": s["seed"], "version": s["version"], "wall_time_s": s["wall_time_s"],
                "events": s["events"]}

    def _write_parquet(self, df: pd.DataFrame, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        prov = self.provenance()
        meta[b"dcnsim.spec"] = json.dumps(prov["spec"], sort_keys=True).encode()
        meta[b"dcnsim.seed"] = str(prov["seed"]).encode()
        meta[b"dcnsim.version"] = str(prov["version"]).encode()
        # zstd: a third smaller than snappy on flow tables, and the sweep store holds millions of rows per run
        pq.write_table(table.replace_schema_metadata(meta), path, compression="zstd")

    def save(self, out_dir, plot: bool = True, csv: bool = False, derived: bool = True) -> Path:
        """Writes flows/queues/switches.parquet (timeseries.parquet when sampled, trace.parquet and
        flow_state.parquet when traced), summary.json and slowdown.png into out_dir, creating it.
        Every Parquet file carries the provenance (spec, seed, version) as key-value metadata under
        `dcnsim.*`. With `csv`, the flow table is also written as flows.csv. Without `derived`, the
        flow table leaves out the microsecond copies of the exact ps times (the sweep store does:
        `load_flows` adds them back), which is a third of its size."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        flows = self.flows if derived else self.flows.drop(columns=list(MICROSECOND_COLUMNS.values()), errors="ignore")
        self._write_parquet(flows, out / "flows.parquet")
        if csv:
            self.flows.to_csv(out / "flows.csv", index=False)
        self._write_parquet(self.queues, out / "queues.parquet")
        self._write_parquet(self.switches, out / "switches.parquet")
        if len(self.timeseries):
            self._write_parquet(self.timeseries, out / "timeseries.parquet")
        if len(self.trace):
            self._write_parquet(self.trace, out / "trace.parquet")
        if len(self.flow_state):
            self._write_parquet(self.flow_state, out / "flow_state.parquet")
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2, sort_keys=True) + "\n")
        if plot:
            from .plots import slowdown_by_size

            slowdown_by_size(self.summary, self.flows, out / "slowdown.png")
        return out

    def __repr__(self) -> str:
        f = self.summary["flows"]
        return f"<dcnsim.Result {self.summary.get('protocol')} flows={f['started']} finished={f['finished']}>"
