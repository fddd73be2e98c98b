"""Sweeps: expansion, keys, the results store's resume and failure semantics, local vs Ray."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

import dcnsim
from dcnsim.sweep import SweepSpec, load_flows, results, run_key, run_sweep
from dcnsim.sweep.spec import compile_filter, load_sweep
from dcnsim.sweep.store import Store


def tiny(duration_us=1500.0):
    return {
        "seed": 1, "duration_us": duration_us, "measure": {"warmup_us": 200.0},
        "topology": {"kind": "single_switch", "hosts": 6, "host_rate_gbps": 10.0},
        "queue": {"limit_packets": 100, "ecn": "step", "ecn_k_packets": 20},
        "transport": {"protocol": "dctcp"},
        "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}],
    }


STABLE = ["key", "status", "goodput_gbps", "slowdown_median", "slowdown_p99", "max_switch_bytes", "events",
          "flows_started"]


def test_axes_expand_as_a_product_with_a_filter():
    s = SweepSpec(base=tiny(), axes={"workload[0].load": [0.2, 0.5, 0.8], "seed": [1, 2]},
                  filter="workload[0].load < 0.7 or seed == 1")
    runs = s.runs()
    assert [v for v, _ in runs] == [
        {"workload[0].load": 0.2, "seed": 1}, {"workload[0].load": 0.2, "seed": 2},
        {"workload[0].load": 0.5, "seed": 1}, {"workload[0].load": 0.5, "seed": 2},
        {"workload[0].load": 0.8, "seed": 1}]
    assert runs[4][1]["workload"][0]["load"] == 0.8 and runs[4][1]["seed"] == 1
    with pytest.raises(dcnsim.SpecError):
        compile_filter("__import__('os').system('true')")
    with pytest.raises(dcnsim.SpecError):
        SweepSpec(base=tiny(), axes={"seed": [1]}, filter="nope == 1").runs()


def test_keys_ignore_key_order_and_spelt_out_defaults_but_nothing_else(tmp_path):
    a = tiny()
    b = json.loads(json.dumps(a))
    b = dict(reversed(list(b.items())))
    b["net"] = {"mtu_bytes": 1500}  # the default, spelt out
    b["transport"]["g"] = 0.0625  # the default, spelt out
    assert run_key(a) == run_key(b)
    c = tiny()
    c["transport"]["g"] = 0.08
    assert run_key(c) != run_key(a)
    d = tiny()
    d["seed"] = 2
    assert run_key(d) != run_key(a)
    # A flow-list file's contents are part of the key.
    f = tmp_path / "flows.csv"
    f.write_text("src,dst,size_bytes,start_us\n0,1,1000,0\n")
    e = tiny()
    e["workload"] = [{"kind": "flow_list", "path": str(f)}]
    k1 = run_key(e)
    f.write_text("src,dst,size_bytes,start_us\n0,1,2000,0\n")
    assert run_key(e) != k1


def test_failed_runs_are_recorded_and_do_not_stop_the_others(tmp_path):
    s = SweepSpec(base=tiny(), axes={"workload[0].load": [0.3, 0.5]})
    # An axis value the core rejects only when the workload is built (more senders than hosts).
    s.axes = {"workload[0]": [{"kind": "poisson", "load": 0.4, "cdf": "fb_hadoop"},
                              {"kind": "incast", "senders": 9, "size_bytes": 1000, "at_us": 1.0}]}
    df = run_sweep(s, tmp_path / "out", workers=2, quiet=True)
    assert list(df["status"]) == ["done", "failed"]
    assert "workload[0].senders" in df["error"].iloc[1] or "senders" in df["error"].iloc[1]


def test_rerun_skips_finished_runs(tmp_path):
    s = SweepSpec(base=tiny(), axes={"seed": [1, 2, 3]})
    out = tmp_path / "out"
    a = run_sweep(s, out, workers=2, quiet=True)
    assert len(set(Store(out).executed())) == 3
    b = run_sweep(s, out, workers=2, quiet=True)
    assert len(Store(out).executed()) == 3, "nothing re-executed"
    pd.testing.assert_frame_equal(a[STABLE], b[STABLE])
    flows = load_flows(out, a["key"][0])
    assert len(flows) == a["flows_started"][0]


def test_killed_sweep_resumes_with_only_the_missing_runs(tmp_path):
    base = tmp_path / "base.toml"
    base.write_text(textwrap.dedent("""
        duration_us = 20000.0
        [topology]
        kind = "leaf_spine"
        racks = 2
        hosts_per_rack = 8
        spines = 2
        host_rate_gbps = 10.0
        core_rate_gbps = 40.0
        [queue]
        limit_packets = 100
        ecn = "step"
        ecn_k_packets = 20
        [transport]
        protocol = "dctcp"
        [[workload]]
        kind = "poisson"
        load = 0.6
        cdf = "fb_hadoop"
    """))
    sw = tmp_path / "sweep.toml"
    sw.write_text('name = "killme"\nbase = "base.toml"\n[axes]\nseed = [1, 2, 3, 4, 5, 6]\n')
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "dcnsim", "sweep", str(sw), "--out", str(out), "--workers", "1", "--quiet"]
    p = subprocess.Popen(cmd, start_new_session=True)
    runs = out / "runs"
    deadline = time.time() + 60
    while time.time() < deadline and not (runs.exists()
                                          and any((d / "DONE").exists() for d in runs.iterdir() if d.is_dir())):
        time.sleep(0.02)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    store = Store(out)
    keys = [r["key"] for r in store.read_sweeps()[0]["runs"]]
    done_before = {k for k in keys if store.is_done(k)}
    assert 1 <= len(done_before) < 6, f"kill landed after {len(done_before)} runs"
    # Partial writes never look finished: every run directory that exists has DONE.
    assert all((d / "DONE").exists() for d in runs.iterdir() if d.is_dir() and not d.name.startswith(".tmp-"))
    before = len(store.executed())
    assert subprocess.run(cmd).returncode == 0
    second = store.executed()[before:]
    assert set(second) == set(keys) - done_before, "only the missing runs ran again"
    df = results(out)
    assert len(df) == 6 and df["key"].is_unique and (df["status"] == "done").all()


def test_local_pool_and_ray_give_identical_results(tmp_path):
    ray = pytest.importorskip("ray")
    s = SweepSpec(base=tiny(), axes={"seed": [1, 2], "workload[0].load": [0.3, 0.6]})
    local = run_sweep(s, tmp_path / "local", workers=2, quiet=True)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = run_sweep(s, tmp_path / "ray", executor="ray", quiet=True)
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(local[STABLE], remote[STABLE])
    for k in local["key"]:
        pd.testing.assert_frame_equal(load_flows(tmp_path / "local", k), load_flows(tmp_path / "ray", k))


def test_sweep_toml_and_cli_results(tmp_path, small_toml):
    (tmp_path / "base.toml").write_text(small_toml)
    (tmp_path / "s.toml").write_text('name = "t"\nbase = "base.toml"\nfilter = "seed != 2"\n[axes]\nseed = [1, 2, 3]\n')
    spec = load_sweep(tmp_path / "s.toml")
    assert spec.name == "t" and len(spec.runs()) == 2
    p = subprocess.run([sys.executable, "-m", "dcnsim", "sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"),
                        "--quiet"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    r = subprocess.run([sys.executable, "-m", "dcnsim", "results", str(tmp_path / "o"),
                        "--csv", str(tmp_path / "r.csv")], capture_output=True, text=True)
    assert r.returncode == 0
    assert len(pd.read_csv(tmp_path / "r.csv")) == 2


def test_sweep_tables_carry_the_columns_of_the_summary_schema_and_the_transport_counters(tmp_path):
    from dcnsim import _core
    from dcnsim.sweep import summary_columns

    base = {"seed": 1, "duration_us": 300.0, "setup": "ndp-paper",
            "topology": {"kind": "fat_tree", "k": 4, "host_rate_gbps": 10.0},
            "workload": [{"kind": "permutation", "size_bytes": 100_000}]}
    df = dcnsim.sweep(base, {"seed": [1]}, out=tmp_path / "out", workers=1, quiet=True)
    schema = json.loads(_core.summary_schema())
    assert {"path", "column", "unit", "doc"} <= set(schema[0])
    plain_columns = [c for _, c in summary_columns() if "{key}" not in c]
    assert all(c in df.columns for c in plain_columns)
    counters = dcnsim.run(base).summary["window_counts"]["transport"]
    assert counters and all(df[f"transport_{k}"].iloc[0] == v for k, v in counters.items())
    assert "slowdown_A_median" in df.columns and "max_switch_bytes_core" in df.columns
