"""Fault injection into a real results store: each kind of stored file damaged in each way, and
what `results`, a resumed sweep, `pack`, `unpack` and `plot` do with it. Nothing may end in a
traceback, show a damaged run as finished, or lose another run; the next sweep heals the store."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import dcnsim
from dcnsim import _core
from dcnsim.cli import main
from dcnsim.errors import SpecError, UsageError
from dcnsim.sweep import SweepSpec, load_flows, results, run_sweep, stored_sweep
from dcnsim.sweep import pack as pack_module
from dcnsim.sweep.pack import pack, unpack
from dcnsim.sweep.store import Store, build_key, run_key, spec_key
from test_sweep import tiny

SPEC = SweepSpec(base=tiny(duration_us=800.0), axes={"seed": [1, 2]}, name="two-seeds")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A two-run store with flow tables, never modified: each test damages a copy."""
    out = tmp_path_factory.mktemp("pristine") / "store"
    run_sweep(SPEC, out, workers=1, quiet=True)
    return out


@pytest.fixture
def store(pristine, tmp_path):
    copy = tmp_path / "store"
    shutil.copytree(pristine, copy)
    return copy


def first_key(out) -> str:
    return sorted(results(out)["key"])[0]


def cut_in_half(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def fewer_rows(path):
    """The same table with half its rows: a readable file that is not the run's."""
    table = pq.read_table(path)
    pq.write_table(table.slice(0, table.num_rows // 2), path)


def deep_json(path):
    path.write_text("[" * 100_000 + "]" * 100_000)


def wrong_field_type(path):
    doc = json.loads(path.read_text())
    doc["goodput_gbps"] = "fast"
    path.write_text(json.dumps(doc))


def nested_field_missing(path):
    doc = json.loads(path.read_text())
    del doc["flows"]["started"]
    path.write_text(json.dumps(doc))


# (file of the run, how it is damaged, what the report says)
DAMAGE = [
    ("summary.json", lambda p: p.write_bytes(b""), "empty"),
    ("summary.json", lambda p: p.write_bytes(os.urandom(300)), "not JSON"),
    ("summary.json", cut_in_half, "not JSON"),
    ("summary.json", lambda p: p.write_text("[]"), "holds a list"),
    ("summary.json", lambda p: p.write_text("{}"), "no field"),
    ("summary.json", wrong_field_type, "goodput_gbps is a string"),
    ("summary.json", nested_field_missing, "no field flows.started"),
    ("summary.json", deep_json, "nested too deeply"),
    ("summary.json", lambda p: p.unlink(), "missing"),
    ("DONE", lambda p: p.write_text("[1]"), "holds a list"),
    ("DONE", lambda p: p.write_text('{"summary_only": "yes"}'), "summary_only is a string"),
    ("DONE", lambda p: p.write_bytes(os.urandom(50)), "not JSON"),
    ("spec.json", lambda p: p.write_bytes(b""), "empty"),
    ("spec.json", lambda p: p.write_text("5"), "holds a number"),
    ("flows.parquet", cut_in_half, "not a readable Parquet file"),
    ("flows.parquet", lambda p: p.write_bytes(b""), "not a readable Parquet file"),
    ("flows.parquet", lambda p: p.write_bytes(os.urandom(5000)), "not a readable Parquet file"),
    ("flows.parquet", fewer_rows, "but summary.json records"),
    ("flows.parquet", lambda p: p.unlink(), "missing"),
    ("queues.parquet", cut_in_half, "not a readable Parquet file"),
    ("switches.parquet", fewer_rows, "but summary.json records"),
]
DAMAGE_IDS = [f"{name}-{n}" for n, (name, _, _) in enumerate(DAMAGE)]


@pytest.mark.parametrize("name,damage,reason", DAMAGE, ids=DAMAGE_IDS)
def test_a_damaged_run_is_reported_left_out_and_run_again(store, name, damage, reason, capsys):
    key = first_key(store)
    damage(store / "runs" / key / name)
    df = results(store)
    row = df.set_index("key").loc[key]
    assert row["status"] == "damaged", "a damaged run never shows as finished"
    assert f"runs/{key}/{name}" in row["error"] and reason in row["error"]
    assert (df["status"] == "done").sum() == 1, "the other run is still there"

    assert main(["results", str(store)]) == 0
    out = capsys.readouterr().out
    assert "1 damaged run(s) left out" in out and f"runs/{key}/{name}" in out
    table = out.split("left out", 1)[1].splitlines()[2:]
    assert not any(line.lstrip().startswith(key) for line in table), "the damaged run is not in the table"

    assert main(["pack", str(store), str(store.parent / "p.gz")]) == 0
    out = capsys.readouterr().out
    assert "1 finished runs" in out and "left out 1 damaged run" in out and name in out

    if name != "flows.parquet":  # the flows of a run whose flow table is damaged cannot be drawn
        assert main(["plot", "fct-cdf", str(store), "--out", str(store.parent / "c.png")]) == 0
        captured = capsys.readouterr()
        assert "1 curves" in captured.out and "damaged" in captured.err

    healed = run_sweep(SPEC, store, workers=1, quiet=True)
    assert list(healed["status"]) == ["done", "done"]
    assert Store(store).executed().count(key) == 2, "the resumed sweep ran the damaged run again"
    assert Store(store).damage(key) is None


def test_sweep_flows_and_plot_name_a_truncated_flow_table(store, capsys):
    key = first_key(store)
    cut_in_half(store / "runs" / key / "flows.parquet")
    with pytest.raises(UsageError, match=f"run {key} .* is damaged .*flows.parquet: not a readable Parquet"):
        load_flows(store, key)
    assert main(["plot", "fct-cdf", str(store), "--out", str(store.parent / "c.png")]) == 0
    captured = capsys.readouterr()
    assert "1 curves" in captured.out and "flows.parquet" in captured.err


def test_a_truncated_time_series_is_damage_and_plot_names_it(tmp_path, capsys):
    spec = SweepSpec(base={**tiny(duration_us=500.0), "metrics": {"sample_interval_us": 50.0}}, axes={"seed": [1]})
    out = tmp_path / "ts"
    key = run_sweep(spec, out, workers=1, quiet=True)["key"][0]
    cut_in_half(out / "runs" / key / "timeseries.parquet")
    assert results(out)["status"].tolist() == ["damaged"]
    assert main(["plot", "timeseries", str(out), "--out", str(tmp_path / "t.png")]) == 2
    err = capsys.readouterr().err
    assert f"runs/{key}/timeseries.parquet: not a readable Parquet file" in err and "Traceback" not in err


def test_a_resumed_sweep_says_it_runs_damaged_runs_again(store, capsys):
    key = first_key(store)
    (store / "runs" / key / "summary.json").write_text("{")
    run_sweep(SPEC, store, workers=1)
    err = capsys.readouterr().err
    assert "1 damaged run(s) are run again" in err and f"runs/{key}/summary.json" in err


SWEEP_JSON_DAMAGE = [b"", b'{"sweeps": ', b"\x00\xff garbage", b'{"sweeps": 5}', b"[]",
                     b'{"sweeps": [{"name": 1, "definition": {}, "runs": []}]}',
                     b'{"sweeps": [{"name": "x", "definition": {}, "runs": [{"key": "../../etc", "axes": {}}]}]}']


@pytest.mark.parametrize("content", SWEEP_JSON_DAMAGE)
def test_a_damaged_sweep_index_is_rebuilt_from_the_runs(store, content, capsys):
    before = results(store)
    (store / "sweep.json").write_bytes(content)
    assert main(["results", str(store)]) == 0
    out = capsys.readouterr().out
    assert "sweep.json was damaged" in out and "rebuilt from the runs" in out
    assert (store / "sweep.json.damaged").read_bytes() == content, "the damaged index is kept"
    rebuilt = results(store)
    assert rebuilt.attrs["index_damage"] is None, "the rebuilt index was written"
    assert sorted(rebuilt["key"]) == sorted(before["key"]) and set(rebuilt["sweep"]) == {"two-seeds"}
    assert sorted(rebuilt["seed"]) == [1, 2], "the axis values come back from the runs' DONE records"
    run_sweep(SPEC, store, workers=1, quiet=True)
    assert len(Store(store).executed()) == 2, "nothing was simulated again"
    assert len(Store(store).read_sweeps()) == 1, "the sweep replaced the entry rebuilt for it"
    assert main(["pack", str(store), str(store.parent / "p.gz")]) == 0


def test_runs_of_earlier_versions_are_rebuilt_into_a_recovered_sweep(store):
    for key in results(store)["key"]:
        done = store / "runs" / key / "DONE"
        record = json.loads(done.read_text())
        del record["sweep"]
        done.write_text(json.dumps(record))
    (store / "sweep.json").write_text("{")
    df = results(store)
    assert list(df["status"]) == ["done", "done"] and set(df["sweep"]) == {"recovered"}


@pytest.mark.parametrize("content", [b"\x00garbage", b"[]", b'{"host": 5}', b'{"host": "h", "pid": -1}',
                                     b'{"host": "h", "pid": 99999999999999}'])
def test_a_garbage_claim_is_stale_and_a_resumed_sweep_takes_the_run_over(store, content):
    key = first_key(store)
    shutil.rmtree(store / "runs" / key)
    (store / "runs" / f"{key}.claim").write_bytes(content)
    assert Store(store).claim_is_stale(key)
    assert results(store).set_index("key").loc[key, "status"] == "missing", "not shown as running forever"
    code = ("import sys; sys.path.insert(0, %r); from test_store_faults import SPEC; "
            "from dcnsim.sweep import run_sweep; run_sweep(SPEC, %r, workers=1, quiet=True)"
            % (os.path.dirname(__file__), str(store)))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert results(store).set_index("key").loc[key, "status"] == "done"


def test_an_empty_claim_is_being_written_for_a_moment_then_stale(store):
    key = first_key(store)
    claim = store / "runs" / f"{key}.claim"
    claim.write_bytes(b"")
    assert not Store(store).claim_is_stale(key), "its owner is writing it"
    old = time.time() - 30
    os.utime(claim, (old, old))
    assert Store(store).claim_is_stale(key)


@pytest.mark.parametrize("content", [b"", b"not json", b"[]", b'{"error": 5}'])
def test_a_damaged_failure_record_reads_as_a_failure_naming_it(store, content):
    key = first_key(store)
    shutil.rmtree(store / "runs" / key)
    (store / "runs" / f"{key}.failed").write_bytes(content)
    row = results(store).set_index("key").loc[key]
    assert row["status"] == "failed" and f"runs/{key}.failed" in row["error"]
    run_sweep(SPEC, store, workers=1, quiet=True)
    assert results(store).set_index("key").loc[key, "status"] == "done"
    assert not (store / "runs" / f"{key}.failed").exists()


def test_a_damaged_execution_log_is_read_around(store):
    with open(store / "executed.log", "ab") as fh:
        fh.write(b"\x00\xffgarbage\n12")
    assert len(Store(store).executed()) == 2


def test_a_damaged_single_run_directory_is_reported(tmp_path, capsys):
    out = tmp_path / "run"
    dcnsim.run(tiny(duration_us=500.0)).save(out, plot=False)
    cut_in_half(out / "flows.parquet")
    assert results(out)["status"].tolist() == ["damaged"]
    assert main(["results", str(out)]) == 0
    assert "flows.parquet: not a readable Parquet file" in capsys.readouterr().out


# Packs


def read_pack(path):
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh]


def write_pack(path, lines):
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps(x) + "\n" for x in lines)


@pytest.fixture
def packed(pristine, tmp_path):
    """The header and records of a pack of the pristine store."""
    pack(pristine, tmp_path / "good.gz")
    return read_pack(tmp_path / "good.gz")


def _with(doc, **changes):
    return {**doc, **changes}


def bad_packs(header, records):
    """(name, lines, what the error says) for each way a pack can be damaged."""
    first, second = records
    return [
        ("done-list", [header, first, _with(second, done=[1])], "done is a list"),
        ("summary-string", [header, first, _with(second, summary="x")], "summary is a string"),
        ("summary-field", [header, first, _with(second, summary=_with(second["summary"], events="many"))],
         "events is a string"),
        ("spec-list", [header, _with(first, spec=[])], "spec is a list"),
        ("header-sweep-name", [_with(header, sweeps=[{"name": 1, "definition": {}, "runs": []}]), first, second],
         "header: sweeps[0].name is a number"),
        ("header-sweeps-number", [_with(header, sweeps=5), first, second], "header: sweeps is a number"),
        ("header-runs-string", [_with(header, runs="2"), first, second], 'runs is "2", expected a whole number'),
        ("header-runs-bool", [_with(header, runs=True), first, second], "runs is true"),
        ("truncated", [header, first], "announces 2 runs but the pack holds 1"),
        ("repeated", [_with(header, runs=3), first, second, first], "repeats run"),
        ("not-json", [header, first, "{"], "line 3"),
    ]


def test_a_pack_that_fails_any_check_adds_nothing(packed, tmp_path):
    header, *records = packed
    for name, lines, message in bad_packs(header, records):
        path = tmp_path / f"{name}.gz"
        if name == "not-json":
            with gzip.open(path, "wt") as fh:
                fh.write(json.dumps(lines[0]) + "\n" + json.dumps(lines[1]) + "\n{\n")
        else:
            write_pack(path, lines)
        target = tmp_path / f"store-{name}"
        with pytest.raises(UsageError, match=f"{re.escape(str(path))}.*{re.escape(message)}") as e:
            unpack(path, target)
        assert "Traceback" not in str(e.value)
        added = [d for d in (target / "runs").iterdir()] if (target / "runs").exists() else []
        assert added == [], f"{name}: nothing is added from a pack that fails"
        assert not (target / "sweep.json").exists()


def test_the_cli_names_a_bad_pack_header(packed, tmp_path, capsys):
    header, *records = packed
    write_pack(tmp_path / "p.gz", [_with(header, runs="2"), *records])
    assert main(["unpack", str(tmp_path / "p.gz"), str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert 'header: runs is "2", expected a whole number of runs' in err and "holds 2" not in err


def test_a_pack_of_zeros_is_refused_without_reading_the_line_whole(tmp_path):
    path = tmp_path / "zeros.gz"
    with gzip.open(path, "wb", compresslevel=1) as fh:
        chunk = b"\0" * (1 << 20)
        for _ in range(64):
            fh.write(chunk)
    tracemalloc.start()
    try:
        with pytest.raises(UsageError, match="line 1 is over"):
            unpack(path, tmp_path / "s")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * pack_module.MAX_LINE_BYTES, f"{peak} bytes held to refuse a 64 MB line"


def test_a_pack_over_the_decompressed_bound_is_refused(packed, tmp_path, monkeypatch):
    write_pack(tmp_path / "p.gz", packed)
    monkeypatch.setattr(pack_module, "MAX_PACK_BYTES", 5000)
    with pytest.raises(UsageError, match="over 5000 bytes decompressed"):
        unpack(tmp_path / "p.gz", tmp_path / "s")
    assert not (tmp_path / "s" / "runs").exists() or not list((tmp_path / "s" / "runs").iterdir())


def test_unpacking_over_a_damaged_run_replaces_it(pristine, packed, store, tmp_path):
    key = first_key(store)
    (store / "runs" / key / "summary.json").write_text("{")
    assert unpack(tmp_path / "good.gz", store) == (1, 1)
    assert results(store).set_index("key").loc[key, "status"] == "done"


# Builds


def test_the_build_id_is_a_hash_of_the_core_and_recorded_with_each_run(pristine):
    build = _core.build_id()
    assert len(build) == 32 and int(build, 16) >= 0
    assert dcnsim.run(tiny(duration_us=300.0)).summary["build"] == {"id": build, "git": _core.build_git()}
    key = first_key(pristine)
    done = json.loads((pristine / "runs" / key / "DONE").read_text())
    assert done["build"] == build and done["spec_key"] and build_key(done["spec_key"], build) == key
    assert results(pristine)["build"].tolist() == [build[:12]] * 2
    assert run_key({**tiny(), "seed": 1}, build="another") != run_key({**tiny(), "seed": 1})


def _fnv_build_id(root) -> str:
    """build.rs's build id, recomputed: two 64-bit FNV-1a hashes over the core's sources, its
    manifest, the workspace's and the lock file, by relative path."""
    names = sorted(str(p.relative_to(root)) for p in (root / "crates/dcnsim-core/src").rglob("*.rs"))
    names = sorted(names + ["crates/dcnsim-core/Cargo.toml", "Cargo.toml", "Cargo.lock"])
    hashes = [0xCBF29CE484222325, 0x6C62272E07BB0142]
    mask, prime = (1 << 64) - 1, 0x100000001B3
    for name in names:
        contents = (root / name).read_bytes()
        data = name.encode() + b"\0" + len(contents).to_bytes(8, "little") + contents
        for n, h in enumerate(hashes):
            for byte in data:
                h = ((h ^ byte) * prime) & mask
            hashes[n] = h
    return "".join(f"{h:016x}" for h in hashes)


def test_the_build_id_hashes_the_core_sources_as_they_are():
    """A stale extension (the core's sources changed since it was compiled) fails here: rebuild it."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "crates/dcnsim-core/src").is_dir():
        pytest.skip("no core sources beside the tests")
    assert _core.build_id() == _fnv_build_id(root)


def test_the_version_names_the_build(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and _core.build_id() in capsys.readouterr().out


def test_runs_of_another_build_are_never_reused_silently(store, monkeypatch, capsys):
    real = _core.build_id()
    monkeypatch.setattr(_core, "build_id", lambda: "0" * 32)
    again = run_sweep(SPEC, store, workers=1)
    err = capsys.readouterr().err
    assert "2 run(s) of this sweep are stored by another build" in err and "--reuse-other-builds" in err
    assert len(Store(store).executed()) == 4, "run again under this build"
    assert again["build"].tolist() == ["0" * 12] * 2
    assert len(Store(store).finished_keys()) == 4, "the other build's runs stay"
    monkeypatch.setattr(_core, "build_id", lambda: "1" * 32)
    reused = run_sweep(SPEC, store, workers=1, reuse_other_builds=True)
    assert "reused as they are" in capsys.readouterr().err
    assert len(Store(store).executed()) == 4 and set(reused["build"]) <= {"0" * 12, real[:12]}
    assert main(["results", str(store)]) == 0
    assert "2 run(s) stored by another build of the core" in capsys.readouterr().out


def test_runs_stored_before_builds_were_recorded_are_of_an_unknown_build(store):
    for key in list(results(store)["key"]):
        done_path = store / "runs" / key / "DONE"
        done = json.loads(done_path.read_text())
        legacy = done.pop("spec_key")
        del done["build"], done["build_git"]
        done_path.write_text(json.dumps(done))
        os.rename(store / "runs" / key, store / "runs" / legacy)
    df = stored_sweep(SPEC, store)
    assert df["status"].tolist() == ["done", "done"] and df["build"].tolist() == ["unknown", "unknown"]
    assert sorted(df["key"]) == sorted(spec_key({**SPEC.base, "seed": s}) for s in (1, 2))
    run_sweep(SPEC, store, workers=1, quiet=True, reuse_other_builds=True)
    assert len(Store(store).executed()) == 2, "reused on purpose"
    run_sweep(SPEC, store, workers=1, quiet=True)
    assert len(Store(store).executed()) == 4, "not reused by default"


def test_the_committed_table5_pack_unpacks_and_reports_as_of_an_unknown_build(tmp_path):
    from dcnsim import repro

    pack_path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "data", "sird-table5.jsonl.gz")
    added, present = unpack(pack_path, tmp_path / "t5")
    assert (added, present) == (432, 0)
    df = stored_sweep(repro.get("sird-table5").build(False), tmp_path / "t5")
    assert (df["status"] == "done").sum() == 432 and set(df["build"]) == {"unknown"}


# Messages


def test_results_counts_each_sweeps_runs_when_sweeps_share_runs(tmp_path, capsys):
    store = Store(tmp_path)
    keys = [f"{n:020x}" for n in range(8)]
    store.add_sweep("A", {"name": "A", "axes": {"seed": [0, 1, 2, 3]}}, [{"key": k, "axes": {}} for k in keys[:4]])
    store.add_sweep("B", {"name": "B", "axes": {"seed": list(range(8))}}, [{"key": k, "axes": {}} for k in keys])
    assert main(["results", str(tmp_path)]) == 0
    assert "A (4 runs), B (8 runs)" in capsys.readouterr().out


def test_a_full_disk_names_the_file(store, capsys):
    assert main(["results", str(store), "--csv", "/dev/full"]) == 2
    assert capsys.readouterr().err.startswith("error: /dev/full: No space left on device")


def test_a_full_disk_while_packing_names_the_pack(store, tmp_path, monkeypatch, capsys):
    def full(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gzip.GzipFile, "write", full)
    assert main(["pack", str(store), str(tmp_path / "p.gz")]) == 2
    assert f"error: {tmp_path / 'p.gz'}: No space left on device" in capsys.readouterr().err
    assert not list(tmp_path.glob("p.gz*")), "no partial pack is left"


def test_describe_into_a_closed_pipe_ends_quietly():
    p = subprocess.run(f"{sys.executable} -m dcnsim describe | head -1", shell=True, capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "" and p.stdout.strip()


def test_a_spec_with_a_lone_surrogate_or_nested_too_deeply_is_a_spec_error(tmp_path, capsys):
    base = tiny(duration_us=300.0)
    with pytest.raises(SpecError) as e:
        dcnsim.run({**base, "name": "a\udc80"})
    assert e.value.field == "name" and "lone surrogate" in e.value.message
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(SpecError, match="nests deeper"):
        dcnsim.run({**base, "seed": deep})
    spec = tmp_path / "deep.toml"
    spec.write_text('duration_us = 100.0\nseed = ' + "[" * 100_000 + "]" * 100_000 + "\n")
    assert main(["run", str(spec), "--out", str(tmp_path / "o")]) == 2
    assert "nest too deeply" in capsys.readouterr().err


def test_run_out_over_an_earlier_run_leaves_it_whole_when_writing_fails(tmp_path, monkeypatch, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('duration_us = 500.0\n[topology]\nkind = "single_switch"\nhosts = 4\nhost_rate_gbps = 10.0\n'
                    '[transport]\nprotocol = "dctcp"\n[[workload]]\nkind = "poisson"\nload = 0.5\ncdf = "fb_hadoop"\n')
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out), "--quiet"]) == 0
    (out / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(dcnsim.Result, "_write_parquet", full)
    assert main(["run", str(spec), "--out", str(out), "--quiet", "--set", "seed=9"]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before, "the earlier run is untouched"
    assert results(out)["status"].tolist() == ["done"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.tmp")]
    monkeypatch.undo()
    assert main(["run", str(spec), "--out", str(out), "--quiet", "--set", "seed=9"]) == 0
    assert (out / "notes.txt").read_text() == "mine", "files a run does not write are kept"
    assert json.loads((out / "summary.json").read_text())["seed"] == 9
    assert results(out)["status"].tolist() == ["done"]


def test_a_sweep_name_with_a_lone_surrogate_is_a_spec_error():
    with pytest.raises(SpecError) as e:
        SweepSpec(base=tiny(), axes={"seed": [1]}, name="sweep \udc80")
    assert e.value.field == "name" and "lone surrogate" in e.value.message


def test_a_read_only_store_with_a_damaged_index_still_reads(store, monkeypatch):
    (store / "sweep.json").write_text("{")

    def read_only(self):
        raise PermissionError(13, "Permission denied", str(store / ".lock"))

    monkeypatch.setattr(Store, "_locked", read_only)
    df = results(store)
    assert sorted(df["status"]) == ["done", "done"] and df.attrs["index_damage"]
    assert (store / "sweep.json").read_text() == "{", "nothing written"


def test_the_sweep_command_reuses_other_builds_only_when_told(store, tmp_path, monkeypatch, capsys):
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(f'name = "two-seeds"\nflow_tables = true\n[base]\n{_toml_table(SPEC.base)}\n'
                          "[axes]\nseed = [1, 2]\n")
    monkeypatch.setattr(_core, "build_id", lambda: "2" * 32)
    assert main(["sweep", str(sweep_file), "--out", str(store), "--workers", "1", "--reuse-other-builds"]) == 0
    assert "reused as they are" in capsys.readouterr().err and len(Store(store).executed()) == 2
    assert main(["sweep", str(sweep_file), "--out", str(store), "--workers", "1", "--quiet"]) == 0
    assert len(Store(store).executed()) == 4


def _toml_table(doc: dict) -> str:
    """The spec as TOML text under [base] (inline tables and arrays)."""
    return "\n".join(f"{key} = {_toml_value(value)}" for key, value in doc.items())


def _toml_value(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)
