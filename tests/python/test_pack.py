"""Summary packs: a store's finished runs carried to another store without their flow tables."""

import gzip
import json

import pandas as pd
import pytest

from dcnsim.cli import main
from dcnsim.errors import UsageError
from dcnsim.sweep import SweepSpec, load_flows, results, run_sweep
from dcnsim.sweep.pack import FORMAT, pack, unpack
from dcnsim.sweep.store import Store
from test_sweep import STABLE, tiny


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A two-run sweep and its store."""
    out = tmp_path_factory.mktemp("store") / "out"
    spec = SweepSpec(base=tiny(), axes={"seed": [1, 2]}, name="two-seeds")
    return spec, out, run_sweep(spec, out, workers=1, quiet=True)


def test_an_unpacked_store_gives_the_same_results_and_a_summary_only_rerun_simulates_nothing(swept, tmp_path):
    spec, out, df = swept
    assert pack(out, tmp_path / "p.jsonl.gz") == 2
    assert unpack(tmp_path / "p.jsonl.gz", tmp_path / "copy") == (2, 0)
    listed = results(tmp_path / "copy")  # the sweep came with the pack: listed before any rerun
    pd.testing.assert_frame_equal(listed[STABLE], df[STABLE])
    lean = SweepSpec(base=spec.base, axes=spec.axes, name=spec.name, flow_tables=False)
    again = run_sweep(lean, tmp_path / "copy", workers=1, quiet=True)
    assert Store(tmp_path / "copy").executed() == [], "packed runs count as finished without flow tables"
    pd.testing.assert_frame_equal(again[STABLE], df[STABLE])
    assert unpack(tmp_path / "p.jsonl.gz", tmp_path / "copy") == (0, 2), "a second unpack adds nothing"


def test_packing_is_deterministic_and_keeps_no_flow_table(swept, tmp_path):
    _, out, df = swept
    pack(out, tmp_path / "a.gz")
    pack(out, tmp_path / "b.gz")
    assert (tmp_path / "a.gz").read_bytes() == (tmp_path / "b.gz").read_bytes()
    unpack(tmp_path / "a.gz", tmp_path / "copy")
    assert not (Store(tmp_path / "copy").run_dir(df["key"][0]) / "flows.parquet").exists()
    assert len(load_flows(out, df["key"][0])) > 0
    with pytest.raises(UsageError, match="unpacked from a summary pack.*flow_tables = true runs it again"):
        load_flows(tmp_path / "copy", df["key"][0])


def _write_pack(path, lines):
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps(x) + "\n" for x in lines)


def packed_lines(swept, tmp_path):
    """The header and records of a real pack of the two-run store."""
    pack(swept[1], tmp_path / "real.gz")
    with gzip.open(tmp_path / "real.gz", "rt") as fh:
        return [json.loads(line) for line in fh]


def test_bad_packs_are_refused_with_the_reason(swept, tmp_path):
    header = {"format": FORMAT, "runs": 1, "sweeps": []}
    record = packed_lines(swept, tmp_path)[1]
    (tmp_path / "plain.txt").write_text("not gzip")
    cases = {
        "plain.txt": "not a gzip'd summary pack",
        "no_header.gz": [record],
        "traversal.gz": [header, {**record, "key": "../../etc"}],
        "truncated.gz": [{**header, "runs": 2}, record],
    }
    messages = {"no_header.gz": "not a summary pack", "traversal.gz": "line 2 is not a run record",
                "truncated.gz": "announces 2 runs but the pack holds 1"}
    for name, content in cases.items():
        if not isinstance(content, str):
            _write_pack(tmp_path / name, content)
        with pytest.raises(UsageError, match=messages.get(name, content if isinstance(content, str) else "")):
            unpack(tmp_path / name, tmp_path / f"store-{name}")
    assert not (tmp_path / "etc").exists()
    with pytest.raises(UsageError, match="no such pack file"):
        unpack(tmp_path / "missing.gz", tmp_path / "s")


def test_the_cli_packs_and_unpacks(swept, tmp_path, capsys):
    _, out, _ = swept
    assert main(["pack", str(out), str(tmp_path / "p.gz")]) == 0
    assert "2 finished runs" in capsys.readouterr().out
    assert main(["unpack", str(tmp_path / "p.gz"), str(tmp_path / "copy")]) == 0
    assert "added 2 summary-only runs" in capsys.readouterr().out
    assert main(["unpack", str(tmp_path / "missing.gz"), str(tmp_path / "copy")]) == 2
    assert "no such pack file" in capsys.readouterr().err


def test_an_unpacked_run_replaces_an_earlier_failure_of_the_same_run(swept, tmp_path):
    _, out, df = swept
    key = df["key"][0]
    store = Store(tmp_path / "copy")
    (store.runs / f"{key}.failed").write_text('{"error": "SimulationError", "message": "x", "time": 0}')
    assert store.failure(key)
    pack(out, tmp_path / "p.gz")
    unpack(tmp_path / "p.gz", tmp_path / "copy")
    assert store.is_done(key) and store.failure(key) is None


def test_a_sweep_without_flow_tables_stores_summaries_and_a_sweep_that_wants_them_reruns(tmp_path):
    out = tmp_path / "out"
    lean = SweepSpec(base=tiny(), axes={"seed": [1, 2]}, name="lean", flow_tables=False)
    df = run_sweep(lean, out, workers=1, quiet=True)
    key = df["key"].iloc[0]
    run_dir = Store(out).run_dir(key)
    assert not (run_dir / "flows.parquet").exists() and (run_dir / "queues.parquet").exists()
    with pytest.raises(UsageError, match="flow_tables = true"):
        load_flows(out, key)
    run_sweep(lean, out, workers=1, quiet=True)
    assert len(Store(out).executed()) == 2, "a summary-only run satisfies a sweep that keeps no flow tables"
    full = SweepSpec(base=tiny(), axes={"seed": [1, 2]}, name="full")
    again = run_sweep(full, out, workers=2, quiet=True)
    assert len(Store(out).executed()) == 4, "a sweep that wants flow tables runs them again"
    pd.testing.assert_frame_equal(again[STABLE], df[STABLE])
    assert len(load_flows(out, key)) == df["flows_started"].iloc[0]


def test_a_sweep_file_names_a_bad_flow_tables_value(tmp_path):
    from dcnsim.errors import SpecError
    from dcnsim.sweep.spec import load_sweep

    f = tmp_path / "s.toml"
    f.write_text('flow_tables = "no"\n[base]\nduration_us = 100.0\n')
    with pytest.raises(SpecError) as e:
        load_sweep(f)
    assert e.value.field == "flow_tables"
    f.write_text('flow_tables = false\n[base]\nduration_us = 100.0\n')
    assert load_sweep(f).flow_tables is False
