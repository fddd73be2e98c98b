"""The Python API: tables, types, consistency with the summary, determinism, saving."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import dcnsim

FLOW_COLUMNS = ["flow_id", "src", "dst", "size_bytes", "start_ps", "end_ps", "fct_ps", "ideal_fct_ps", "slowdown"]


def test_flows_table_has_documented_columns_and_consistent_values(small_spec):
    r = dcnsim.run(small_spec)
    f = r.flows
    assert list(f.columns[: len(FLOW_COLUMNS)]) == FLOW_COLUMNS
    assert len(f) > 20
    assert f["size_bytes"].dtype == np.uint64
    assert str(f["end_ps"].dtype) == "UInt64" and str(f["fct_ps"].dtype) == "UInt64"
    done = f[f["end_ps"].notna()]
    assert len(done) > 0
    assert (done["fct_ps"] == done["end_ps"] - done["start_ps"]).all()
    ratio = done["fct_ps"].astype("float64") / done["ideal_fct_ps"].astype("float64")
    np.testing.assert_allclose(done["slowdown"].to_numpy(), ratio.to_numpy())
    assert (done["slowdown"] >= 1.0).all()
    assert f.loc[f["end_ps"].isna(), "slowdown"].isna().all()
    # The times again in microseconds, NaN where a flow did not finish.
    for ps in ["start_ps", "end_ps", "fct_ps", "ideal_fct_ps"]:
        us = ps.replace("_ps", "_us")
        assert f[us].dtype == np.float64
        np.testing.assert_allclose(f[us].to_numpy(), f[ps].to_numpy(dtype="float64", na_value=np.nan) / 1e6)
    assert f.loc[f["end_ps"].isna(), "end_us"].isna().all()
    assert r.summary["flows"]["started"] == len(f)
    assert r.summary["flows"]["finished"] == len(done)
    # Packet conservation is part of every run's summary.
    p = r.summary["packets"]
    assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"]


def test_summary_records_provenance(small_spec):
    r = dcnsim.run(small_spec)
    s = r.summary
    assert s["seed"] == 7 and s["version"] == dcnsim.__version__
    assert s["events"] > 0 and s["wall_time_s"] > 0
    assert s["spec"]["workload"][0]["load"] == 0.5
    # Defaults are filled in.
    assert s["spec"]["net"]["mtu_bytes"] == 1500
    assert s["spec"]["routing"]["load_balancing"] == "ecmp"
    assert r.spec == s["spec"]


def test_queue_and_switch_tables(small_spec):
    r = dcnsim.run(small_spec)
    q = r.queues
    assert {"node", "peer", "role", "max_bytes", "mean_bytes", "drops", "ecn_marks", "utilization"} <= set(q.columns)
    assert set(q["role"]) == {"host_nic", "to_host", "fabric"}
    assert (q["utilization"] <= 1.0 + 1e-9).all()
    assert (q["mean_bytes"] <= q["max_bytes"] + 1e-9).all()
    sw = r.switches
    assert len(sw) == 4  # 2 ToRs + 2 spines
    # A switch's occupancy is the sum over its ports: its max is at least any one port's max.
    for name, row in sw.set_index("switch").iterrows():
        assert row["max_bytes"] >= q.loc[q["node"] == name, "max_bytes"].max()


def test_same_seed_identical_other_seed_differs(small_spec):
    a = dcnsim.run(small_spec).flows
    b = dcnsim.run(small_spec).flows
    pd.testing.assert_frame_equal(a, b)
    other = dict(small_spec, seed=8)
    c = dcnsim.run(other).flows
    assert not a.equals(c)


def test_toml_path_text_and_dict_agree(tmp_path, small_toml, small_spec):
    p = tmp_path / "s.toml"
    p.write_text(small_toml)
    a = dcnsim.run(p).flows
    b = dcnsim.run(str(p)).flows
    c = dcnsim.run(small_toml).flows
    d = dcnsim.run(small_spec).flows
    for x in (b, c, d):
        pd.testing.assert_frame_equal(a, x)


def test_relative_paths_resolve_against_the_spec_file(tmp_path):
    (tmp_path / "flows.csv").write_text("src,dst,size_bytes,start_us\n0,1,5000,1.0\n")
    (tmp_path / "s.toml").write_text(
        'duration_us = 1000.0\n[topology]\nkind = "single_switch"\nhosts = 2\nhost_rate_gbps = 10.0\n'
        '[transport]\nprotocol = "dctcp"\n[[workload]]\nkind = "flow_list"\npath = "flows.csv"\n'
    )
    r = dcnsim.run(tmp_path / "s.toml")
    assert len(r.flows) == 1
    assert r.flows["fct_ps"].iloc[0] == r.flows["ideal_fct_ps"].iloc[0]


def test_save_writes_every_file_with_provenance(tmp_path, small_spec):
    r = dcnsim.run(small_spec)
    out = r.save(tmp_path / "out")
    for name in ["flows.parquet", "queues.parquet", "switches.parquet", "summary.json", "slowdown.png"]:
        assert (out / name).stat().st_size > 0, name
    t = pq.read_table(out / "flows.parquet")
    meta = t.schema.metadata
    assert json.loads(meta[b"dcnsim.spec"])["seed"] == 7
    assert meta[b"dcnsim.version"].decode() == dcnsim.__version__
    back = t.to_pandas()
    pd.testing.assert_frame_equal(back.reset_index(drop=True), r.flows, check_categorical=False)
    assert json.loads((out / "summary.json").read_text())["flows"] == r.summary["flows"]


def test_a_run_without_its_flow_table_has_the_same_summary_and_says_what_it_lacks(tmp_path, small_spec):
    from dcnsim.errors import UsageError

    full, lean = dcnsim.run(small_spec), dcnsim.run(small_spec, flows=False)
    timing = {"wall_time_s", "setup_time_s", "events_per_sec", "cpu_time_s", "events_per_cpu_sec"}
    assert {k: v for k, v in lean.summary.items() if k not in timing} == \
        {k: v for k, v in full.summary.items() if k not in timing}
    assert full.has_flows and not lean.has_flows and full.summary["flows"]["finished"] > 0
    with pytest.raises(UsageError, match="flows=False"):
        lean.flows
    with pytest.raises(UsageError, match="plot=False"):
        lean.save(tmp_path / "plot")
    lean.save(tmp_path / "lean", plot=False)
    assert sorted(p.name for p in (tmp_path / "lean").iterdir()) == ["queues.parquet", "summary.json",
                                                                     "switches.parquet"]
    pd.testing.assert_frame_equal(lean.queues, full.queues)
    with pytest.raises(UsageError, match="flows must be True or False"):
        dcnsim.run(small_spec, flows="no")


def test_string_columns_are_categorical_and_survive_parquet(tmp_path, small_spec):
    r = dcnsim.run(small_spec)
    assert isinstance(r.flows["workload"].dtype, pd.CategoricalDtype)
    assert set(r.flows["workload"]) == {"poisson"}
    assert r.queues["node"].nunique() == len(set(r.queues["node"].astype(str)))
    r.save(tmp_path)
    back = pd.read_parquet(tmp_path / "queues.parquet")
    assert (back["node"].astype(str).to_numpy() == r.queues["node"].astype(str).to_numpy()).all()


def test_relative_cdf_file_resolves_against_the_spec_file(tmp_path, small_toml):
    (tmp_path / "cdfs").mkdir()
    (tmp_path / "cdfs" / "two.cdf").write_text("1000 0.5\n20000 1.0\n")
    (tmp_path / "s.toml").write_text(
        small_toml.replace('cdf = "fb_hadoop"', 'cdf = "cdfs/two.cdf"\ninterpolation = "step"'))
    r = dcnsim.run(tmp_path / "s.toml")
    assert set(r.flows["size_bytes"]) <= {1000, 20000}
    assert r.spec["workload"][0]["cdf"] == str(tmp_path / "cdfs" / "two.cdf")


def test_the_interpreter_lock_is_released_while_simulating(small_spec):
    import threading
    import time

    span = {}

    def work():
        t0 = time.perf_counter()
        dcnsim.run(dict(small_spec, duration_us=600000.0))
        span["run"] = (t0, time.perf_counter())

    t = threading.Thread(target=work)
    t.start()
    ticks = []
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.002)
    t.join()
    t0, t1 = span["run"]
    assert t1 - t0 > 0.1, "the run is too short to tell"
    # Holding the lock would freeze this thread for the whole run.
    inside = [x for x in ticks if t0 + 0.02 < x < t1 - 0.02]
    assert len(inside) > 0.25 * (t1 - t0 - 0.04) / 0.002


def test_slowdown_plot_places_the_summarys_groups(small_spec):
    from dcnsim.plots import size_group_spans

    r = dcnsim.run(small_spec)
    spans = size_group_spans(r.summary, r.flows)
    nonempty = [g for g in r.summary["slowdown_by_size"] if g["count"]]
    assert [g["group"] for g in spans] == [g["group"] for g in nonempty]
    for g in spans:
        inside = r.flows[r.flows["counted"] & r.flows["slowdown"].notna()
                         & (r.flows["size_bytes"] >= g["min_bytes"])
                         & (r.flows["size_bytes"] < (g["max_bytes"] or np.inf))]
        assert len(inside) == g["count"]  # the plot and the summary count the same flows
        assert g["lo"] <= g["x"] <= g["hi"]
        assert g["median"] == pytest.approx(inside["slowdown"].median())


def test_spec_errors_are_value_errors_with_field_and_pickle(small_spec):
    import pickle

    with pytest.raises(ValueError) as e:
        dcnsim.run(dict(small_spec, seed=-1))
    err = e.value
    assert isinstance(err, dcnsim.SpecError) and err.field == "seed"
    assert str(err) == f"spec error at `seed`: {err.message}"
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.field, back.message) == (dcnsim.SpecError, err.field, err.message)
    # The extension's own exception carries the same attributes.
    from dcnsim import _core

    with pytest.raises(_core.SpecError) as raw:
        _core.run(json.dumps(dict(small_spec, seed=-1)), False)
    assert (raw.value.field, raw.value.message) == (err.field, err.message)


def test_values_json_cannot_carry_are_spec_errors_naming_the_field(small_spec):
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run(dict(small_spec, duration_us=float("nan")))
    assert e.value.field == "duration_us" and "finite" in e.value.message


def test_describe_lists_protocols_and_parameters_with_units():
    d = dcnsim.describe()
    assert {"dctcp", "newreno"} <= {p["name"] for p in d["protocols"]}
    assert {"single_switch", "dumbbell", "leaf_spine", "fat_tree"} <= {t["name"] for t in d["topologies"]}
    assert "websearch" in d["cdfs"]
    params = {p["path"]: p for p in d["params"]}
    assert params["workload[].load"]["unit"] == "fraction"
    assert params["transport.g"]["default"] == "0.0625"
    assert params["duration_us"]["default"] is None  # required
    assert params["net.mtu_bytes"]["unit"] == "bytes"
    assert all(p["doc"] for p in d["params"]), [p["path"] for p in d["params"] if not p["doc"]]


def test_time_series_of_queues_and_receive_rates(small_spec, tmp_path):
    s = dict(small_spec, metrics={"sample_interval_us": 100.0})
    r = dcnsim.run(s)
    ts = r.timeseries
    assert set(ts["series"]) == {"switch_queue_bytes", "host_rx_gbps"}
    rx = ts[ts["series"] == "host_rx_gbps"]
    assert len(rx) == 8 * 30  # 8 hosts x 30 samples in 3 ms
    # A host never receives faster than its 10 Gb/s link.
    assert rx["value"].max() <= 10.0 + 1e-9
    # Over the measurement window, the sampled receive rates average to the goodput.
    w = rx[rx["time_ps"] > 600_000_000]
    per_sample = w.groupby("time_ps")["value"].sum().mean()
    assert abs(per_sample - r.summary["goodput_gbps"]) < 0.1 * r.summary["goodput_gbps"]
    q = ts[ts["series"] == "switch_queue_bytes"]
    assert set(q["name"]) == set(r.switches["switch"]) and (q["value"] <= r.switches["max_bytes"].max()).all()
    assert len(dcnsim.run(small_spec).timeseries) == 0, "off by default"
    r.save(tmp_path)
    assert (tmp_path / "timeseries.parquet").exists()


def test_spec_examples_in_the_docs_are_valid():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    blocks = []
    for doc in ["README.md", "docs/spec.md", "docs/protocols/ndp.md"]:
        blocks += [b for b in re.findall(r"```toml\n(.*?)```", (root / doc).read_text(), re.S) if "duration_us" in b]
    assert len(blocks) >= 2
    for b in blocks:
        dcnsim.resolve(b)
