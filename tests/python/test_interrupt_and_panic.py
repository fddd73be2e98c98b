"""Ctrl-C stops dcnsim.run (as it stops the CLI), and a panic inside the core is a SimulationError
(picklable), recorded by sweeps as a failure of its run, never the end of the sweep."""

import multiprocessing
import pickle
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import dcnsim
from dcnsim import _core
from dcnsim.sweep import SweepSpec, run_sweep
from dcnsim.sweep.store import Store

# About a minute of simulation at full speed: interrupting it is the only way it ends quickly.
LONG = {
    "seed": 1, "duration_us": 2_000_000.0,
    "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 8, "spines": 2, "host_rate_gbps": 10.0,
                 "core_rate_gbps": 40.0},
    "queue": {"limit_packets": 100, "ecn": "step", "ecn_k_packets": 20},
    "transport": {"protocol": "dctcp"},
    "workload": [{"kind": "poisson", "load": 0.7, "cdf": "fb_hadoop"}],
}


def test_ctrl_c_interrupts_dcnsim_run_in_a_notebook_like_process():
    # The parent waits for the child's marker, then sends SIGINT, as a notebook kernel does.
    code = textwrap.dedent(f"""
        import sys, dcnsim
        print("started", flush=True)
        try:
            dcnsim.run({LONG!r})
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    threading.Timer(0.5, p.send_signal, (signal.SIGINT,)).start()
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("dcnsim.run ignored Ctrl-C")
    assert out.strip() == "interrupted", (out, err)


def test_a_second_ctrl_c_waits_for_the_core_to_stop():
    # A core slow to notice its cancel flag (0.5 s here, milliseconds in reality): the second SIGINT
    # arrives while the first is being handled. Leaving then would end the interpreter under a thread
    # still inside the core (glibc aborts: "FATAL: exception not rethrown"); the run must wait.
    code = textwrap.dedent("""
        import os, signal, sys, threading, time
        from dcnsim import spec
        def slow_core(text, flag):
            print("started", flush=True)
            while not flag.is_set():
                time.sleep(0.01)
            threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
            time.sleep(0.5)
            print("core stopped", flush=True)
            raise KeyboardInterrupt
        try:
            spec._interruptible(slow_core, "{}")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert out.split("\n")[:2] == ["core stopped", "interrupted"], (out, err)


def test_a_cancel_flag_set_from_another_thread_stops_the_core():
    flag = _core.CancelFlag()
    threading.Timer(0.2, flag.set).start()
    with pytest.raises(KeyboardInterrupt):
        _core.run(dcnsim.spec._to_json(LONG), False, flag)
    assert flag.is_set()


def test_a_panic_in_the_core_is_a_picklable_simulation_error():
    with pytest.raises(dcnsim.SimulationError) as e:
        _core._panic_for_tests("boom at event 42")
    assert "panic: boom at event 42" in str(e.value) and "dcnsim bug" in str(e.value)
    back = pickle.loads(pickle.dumps(e.value))
    assert str(back) == str(e.value)


def tiny(seed):
    return {"seed": seed, "duration_us": 400.0,
            "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
            "transport": {"protocol": "dctcp"}, "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}]}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_panic_inside_a_run_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch, workers):
    if workers > 1 and multiprocessing.get_start_method() != "fork":
        pytest.skip("the injected panic reaches worker processes only when they are forked")
    real = _core.run

    def panics_for_seed_2(text, progress=False, cancel=None, summary_only=False):
        if '"seed": 2' in text:
            _core._panic_for_tests("injected")
        return real(text, progress, cancel, summary_only)

    monkeypatch.setattr(_core, "run", panics_for_seed_2)
    df = run_sweep(SweepSpec(base=tiny(1), axes={"seed": [1, 2, 3]}), tmp_path / "out", workers=workers, quiet=True)
    assert list(df["status"]) == ["done", "failed", "done"]
    assert "SimulationError" in df["error"][1] and "panic: injected" in df["error"][1]
    store = Store(tmp_path / "out")
    assert sorted(store.executed()) == sorted([df["key"][0], df["key"][2]]), "only completed runs are logged"
    # Nothing of the failed run stays claimed: a rerun retries it (here it now succeeds).
    monkeypatch.setattr(_core, "run", real)
    again = run_sweep(SweepSpec(base=tiny(1), axes={"seed": [1, 2, 3]}), tmp_path / "out", workers=workers, quiet=True)
    assert (again["status"] == "done").all()


def test_ctrl_c_stops_a_local_sweep_and_its_workers(tmp_path):
    import json
    import os
    import time

    (tmp_path / "base.json").write_text(json.dumps(LONG))
    code = textwrap.dedent(f"""
        import json
        from dcnsim.sweep import SweepSpec, run_sweep
        base = json.load(open({str(tmp_path / "base.json")!r}))
        sweep = SweepSpec(base=base, axes={{"seed": [1, 2, 3]}})
        try:
            run_sweep(sweep, {str(tmp_path / "out")!r}, workers=2, quiet=True)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted")
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True)
    runs = tmp_path / "out" / "runs"
    deadline = time.time() + 30
    while time.time() < deadline and not (runs.exists() and list(runs.glob("*.claim"))):
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the sweep and its workers
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        pytest.fail("the sweep ignored Ctrl-C")
    assert out.strip() == "interrupted"
    assert not list(runs.glob("*.claim")) and not [d for d in runs.iterdir() if (d / "DONE").exists()]
