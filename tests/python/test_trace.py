"""Traces of chosen flows: r.trace and r.flow_state, their files, and the row-cap warning."""

import json
import subprocess
import sys

import pandas as pd
import pytest

import dcnsim
from dcnsim.result import FLOW_STATE_COLUMNS, TRACE_COLUMNS

EVENTS = {"enqueue", "drop", "mark", "trim", "bounce", "tx_start", "arrive", "deliver", "lose"}


@pytest.fixture
def big_flows(small_spec):
    """Ids of the two largest flows of the small spec (a run is a function of its spec: tracing
    the same spec sees the same flows)."""
    f = dcnsim.run(small_spec).flows
    return sorted(int(i) for i in f.nlargest(2, "size_bytes")["flow_id"])


def traced(spec: dict, flows, **trace) -> dict:
    return {**spec, "trace": {"flows": flows, **trace}}


def test_trace_and_flow_state_have_their_columns(small_spec, big_flows):
    r = dcnsim.run(traced(small_spec, big_flows))
    t, s = r.trace, r.flow_state
    assert list(t.columns) == TRACE_COLUMNS
    assert list(s.columns) == FLOW_STATE_COLUMNS
    assert len(t) > 100 and len(s) > 10
    assert set(t["flow_id"]) == set(big_flows) and set(s["flow_id"]) == set(big_flows)
    for col in ["kind", "node", "event"]:
        assert isinstance(t[col].dtype, pd.CategoricalDtype), col
    assert set(t["event"]) <= EVENTS and {"enqueue", "tx_start", "arrive", "deliver"} <= set(t["event"])
    assert t["time_ps"].is_monotonic_increasing
    assert set(t["node"]) <= set(r.queues["node"]) | set(r.queues["peer"])
    assert {"cwnd_bytes", "ssthresh_bytes", "alpha"} <= set(s["variable"])
    # The first sample of a flow is at its start, with DCTCP's initial window of 10 packets.
    f = big_flows[0]
    start = int(r.flows.loc[r.flows["flow_id"] == f, "start_ps"].iloc[0])
    first = s[(s["flow_id"] == f) & (s["variable"] == "cwnd_bytes")].iloc[0]
    assert (first["time_ps"], first["value"]) == (start, 10 * 1436)
    assert r.summary["trace"]["truncated"] is False


def test_untraced_runs_have_empty_tables_with_the_columns(small_spec):
    r = dcnsim.run(small_spec)
    assert len(r.trace) == 0 and list(r.trace.columns) == TRACE_COLUMNS
    assert len(r.flow_state) == 0 and list(r.flow_state.columns) == FLOW_STATE_COLUMNS
    assert "trace" not in r.summary


def test_a_cut_trace_warns(small_spec, big_flows):
    with pytest.warns(UserWarning, match="max_rows = 50 cut the packet trace"):
        r = dcnsim.run(traced(small_spec, big_flows, max_rows=50))
    assert len(r.trace) == 50 and r.summary["trace"]["truncated"] is True


def test_bad_trace_flows_name_the_field(small_spec):
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run({**small_spec, "trace": {"flows": [1, -2]}})
    assert e.value.field == "trace.flows[1]"


def test_dcnsim_run_writes_trace_files_only_when_traced(tmp_path, small_toml, big_flows):
    plain, with_trace = tmp_path / "plain.toml", tmp_path / "traced.toml"
    plain.write_text(small_toml)
    with_trace.write_text(small_toml + f"[trace]\nflows = [{big_flows[0]}]\nstate_interval_us = 5.0\n")
    for spec, out in [(plain, tmp_path / "a"), (with_trace, tmp_path / "b")]:
        p = subprocess.run([sys.executable, "-m", "dcnsim", "run", str(spec), "--out", str(out), "--quiet"],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    assert not (tmp_path / "a" / "trace.parquet").exists() and not (tmp_path / "a" / "flow_state.parquet").exists()
    t = pd.read_parquet(tmp_path / "b" / "trace.parquet")
    s = pd.read_parquet(tmp_path / "b" / "flow_state.parquet")
    assert list(t.columns) == TRACE_COLUMNS and set(t["flow_id"]) == {big_flows[0]}
    assert list(s.columns) == FLOW_STATE_COLUMNS
    steps = s.loc[s["variable"] == "cwnd_bytes", "time_ps"].diff().dropna()
    assert (steps <= 5_000_000).all(), "sampled every 5 us"
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["trace"]["packet_rows"] == len(t)
