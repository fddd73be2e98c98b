"""The results store shared by sweeps: several sweeps in one directory, runs claimed before they
are simulated, every file a spec names in its key, executed.log of completed simulations."""

import json
import os
import subprocess
import sys

import pytest

import dcnsim
from dcnsim.sweep import SweepSpec, results, run_key, run_sweep
from dcnsim.sweep.store import Store, execute


def tiny(**kw):
    s = {"seed": 1, "duration_us": 400.0,
         "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
         "transport": {"protocol": "dctcp"}, "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}]}
    s.update(kw)
    return s


def test_a_second_sweep_in_the_same_directory_keeps_the_first(tmp_path):
    out = tmp_path / "out"
    a = run_sweep(SweepSpec(base=tiny(), axes={"seed": [1, 2]}, name="a"), out, workers=1, quiet=True)
    b = run_sweep(SweepSpec(base=tiny(), axes={"workload[0].load": [0.2, 0.3, 0.5]}, name="b"), out, workers=1,
                  quiet=True)
    assert len(a) == 2 and len(b) == 3, "each sweep returns its own runs"
    every = results(out)
    # seed 1 at load 0.5 is in both sweeps: listed once, under the first.
    assert set(every["key"]) == set(a["key"]) | set(b["key"]) and len(every) == 4
    assert (every["status"] == "done").all()
    assert list(results(out, sweep="b")["key"]) == list(b["key"])
    with pytest.raises(dcnsim.errors.UsageError, match="holds: a, b"):
        results(out, sweep="c")
    # Re-running a sweep resumes it without adding a third entry.
    run_sweep(SweepSpec(base=tiny(), axes={"seed": [1, 2]}, name="a"), out, workers=1, quiet=True)
    assert [s["name"] for s in Store(out).read_sweeps()] == ["a", "b"]
    assert sorted(Store(out).executed()) == sorted(every["key"]), "the shared run was simulated once"


def test_two_sweeps_started_together_simulate_every_run_once(tmp_path):
    base = tmp_path / "base.toml"
    # Runs of ~0.2 s each, so the two sweeps overlap for sure.
    base.write_text('duration_us = 30000.0\n[topology]\nkind = "leaf_spine"\nracks = 2\nhosts_per_rack = 4\n'
                    'spines = 2\nhost_rate_gbps = 10.0\ncore_rate_gbps = 20.0\n[transport]\nprotocol = "dctcp"\n'
                    '[[workload]]\nkind = "poisson"\nload = 0.6\ncdf = "fb_hadoop"\n')
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('name = "twice"\nbase = "base.toml"\n[axes]\nseed = [1, 2, 3, 4, 5, 6]\n')
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "dcnsim", "sweep", str(sweep), "--out", str(out), "--workers", "1", "--quiet"]
    procs = [subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    executed = Store(out).executed()
    assert len(executed) == 6 and len(set(executed)) == 6, executed
    df = results(out)
    assert len(df) == 6 and (df["status"] == "done").all()
    assert not list((out / "runs").glob("*.claim")), "claims are released"


def test_a_claim_is_respected_while_its_owner_lives_and_taken_over_when_it_died(tmp_path):
    store = Store(tmp_path)
    spec = tiny()
    key = run_key(spec)
    claim = store.runs / f"{key}.claim"
    import socket

    claim.write_text(json.dumps({"host": socket.gethostname(), "pid": os.getppid(), "since": 0}))
    assert execute(str(tmp_path), key, spec) == {"key": key, "status": "busy"}
    assert results_status(tmp_path, key) == "running"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    claim.write_text(json.dumps({"host": socket.gethostname(), "pid": int(dead.stdout), "since": 0}))
    assert execute(str(tmp_path), key, spec)["status"] == "done"
    assert store.executed() == [key] and not claim.exists()


def results_status(root, key):
    from dcnsim.sweep import _run_row

    return _run_row(Store(root), key)["status"]


def test_a_claim_without_heartbeat_is_stale_on_any_host(tmp_path):
    store = Store(tmp_path)
    claim = store.runs / "k.claim"
    claim.write_text(json.dumps({"host": "another-host", "pid": 1, "since": 0}))
    assert not store.claim_is_stale("k")
    old = os.stat(claim).st_mtime - 3600
    os.utime(claim, (old, old))
    assert store.claim_is_stale("k") and store.claim("k")


def test_a_relative_flow_list_path_in_a_dict_spec_is_hashed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flows.csv").write_text("src,dst,size_bytes,start_us\n0,1,1000,0\n")
    spec = tiny(workload=[{"kind": "flow_list", "path": "flows.csv"}])
    first = dcnsim.sweep(spec, {"seed": [1]}, out=tmp_path / "out", workers=1, quiet=True)
    (tmp_path / "flows.csv").write_text("src,dst,size_bytes,start_us\n0,1,5000,0\n")
    second = dcnsim.sweep(spec, {"seed": [1]}, out=tmp_path / "out", workers=1, quiet=True)
    assert first["key"][0] != second["key"][0]
    assert list(dcnsim.sweep_flows(tmp_path / "out", second["key"][0])["size_bytes"]) == [5000]
    # A CDF file named without a slash is hashed too.
    (tmp_path / "sizes.cdf").write_text("1000 0.5\n2000 1.0\n")
    cdf = tiny(workload=[{"kind": "poisson", "load": 0.5, "cdf": "sizes.cdf", "interpolation": "step"}])
    k1 = run_key(cdf)
    (tmp_path / "sizes.cdf").write_text("1000 0.5\n3000 1.0\n")
    assert run_key(cdf) != k1


def test_inline_flow_lists_are_part_of_the_key():
    a = tiny(workload=[{"kind": "flow_list", "flows": [[0, 1, 1000, 0.0]]}])
    b = tiny(workload=[{"kind": "flow_list", "flows": [[0, 1, 2000, 0.0]]}])
    assert run_key(a) != run_key(b)
    assert list(dcnsim.run(b).flows["size_bytes"]) == [2000]


def test_the_key_ignores_keys_at_their_default_and_no_other_value():
    from dcnsim.sweep.store import without_defaults

    resolved = dcnsim.resolve(tiny())
    # A version that did not have `connection_setup` or `trim_mode` resolved the same run without them.
    older = json.loads(json.dumps(resolved))
    del older["transport"]["connection_setup"], older["queue"]["trim_mode"]
    assert without_defaults(older) == without_defaults(resolved)
    # A value away from its default stays in the key, and so does the protocol that scopes it.
    stripped = without_defaults(dcnsim.resolve(tiny(transport={"protocol": "dctcp", "g": 0.08})))
    assert stripped["transport"]["g"] == 0.08 and stripped["transport"]["protocol"] == "dctcp"
    assert "g" not in without_defaults(resolved)["transport"]
    assert run_key(tiny(transport={"protocol": "dctcp", "g": 0.08})) != run_key(tiny())
    assert run_key(tiny(transport={"protocol": "dctcp", "g": 0.0625})) == run_key(tiny())


def test_a_run_stored_under_an_earlier_key_is_renamed_not_simulated_again(tmp_path):
    spec = tiny()
    dcnsim.sweep(spec, {"seed": [1]}, out=tmp_path, workers=1, quiet=True)
    key = run_key({**spec, "seed": 1})
    # As an earlier version stored it: another directory name, a resolved spec without a later key.
    summary_path = tmp_path / "runs" / key / "summary.json"
    summary = json.loads(summary_path.read_text())
    del summary["spec"]["transport"]["connection_setup"]
    summary_path.write_text(json.dumps(summary))
    os.rename(tmp_path / "runs" / key, tmp_path / "runs" / "0123456789abcdef0123")
    again = dcnsim.sweep(spec, {"seed": [1]}, out=tmp_path, workers=1, quiet=True)
    assert list(again["key"]) == [key] and (tmp_path / "runs" / key / "DONE").exists()
    assert len(Store(tmp_path).executed()) == 1
    # A run whose stored spec differs in a real value is not taken for this one.
    summary["spec"]["transport"]["g"] = 0.5
    (tmp_path / "runs" / key / "summary.json").write_text(json.dumps(summary))
    os.rename(tmp_path / "runs" / key, tmp_path / "runs" / "0123456789abcdef0123")
    dcnsim.sweep(spec, {"seed": [1]}, out=tmp_path, workers=1, quiet=True)
    assert len(Store(tmp_path).executed()) == 2


def test_a_sweep_waits_for_a_run_held_elsewhere_and_takes_it_over_when_the_owner_dies(tmp_path):
    import socket
    import threading

    spec = tiny(seed=5)
    key = run_key(spec)
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    store = Store(tmp_path)
    (store.runs / f"{key}.claim").write_text(json.dumps({"host": socket.gethostname(), "pid": owner.pid, "since": 0}))

    def die():
        owner.kill()
        owner.wait()

    threading.Timer(1.0, die).start()
    df = run_sweep(SweepSpec(base=spec, axes={"seed": [5, 6]}), tmp_path, workers=1, quiet=True)
    assert (df["status"] == "done").all() and owner.poll() is not None
    assert sorted(store.executed()) == sorted(df["key"]), "each run simulated once, the orphan by this sweep"


def test_the_store_keeps_exact_times_only_and_load_flows_restores_the_microsecond_columns(tmp_path):
    import pandas as pd

    from dcnsim.sweep import load_flows

    out = tmp_path / "out"
    df = run_sweep(SweepSpec(base=tiny(), axes={"seed": [1]}, name="a"), out, workers=1, quiet=True)
    key = df["key"][0]
    on_disk = pd.read_parquet(Store(out).run_dir(key) / "flows.parquet")
    assert "fct_us" not in on_disk and "fct_ps" in on_disk, "derived columns are not stored"
    back = load_flows(out, key)
    direct = dcnsim.run(tiny()).flows
    assert list(back.columns) == list(direct.columns), "load_flows gives the table dcnsim.run gives"
    pd.testing.assert_frame_equal(back, direct, check_dtype=False, check_categorical=False)
