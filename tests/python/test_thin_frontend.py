"""The front end stays thin: running and saving a run import no table library, and the Parquet
files written from Rust read back as the DataFrames `Result` gives (same columns, dtypes, values)."""

import json
import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq

import dcnsim

HEAVY = ("pandas", "numpy", "pyarrow", "matplotlib")


def _imported_after(code: str, tmp_path) -> list:
    """The heavy modules a fresh interpreter has imported after running `code`."""
    probe = code + f"\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


def test_import_run_and_save_import_no_table_library(tmp_path, small_toml):
    (tmp_path / "s.toml").write_text(small_toml)
    assert _imported_after("import dcnsim", tmp_path) == []
    assert _imported_after("import dcnsim\nr = dcnsim.run('s.toml')\nr.save('out', plot=False)", tmp_path) == []
    assert (tmp_path / "out" / "flows.parquet").exists()
    # Reading a table is what brings pandas in.
    assert "pandas" in _imported_after("import dcnsim\nlen(dcnsim.run('s.toml').flows)", tmp_path)


def test_the_command_line_run_imports_no_table_library_unless_asked(tmp_path, small_toml):
    (tmp_path / "s.toml").write_text(small_toml)
    run = "from dcnsim.cli import main\nassert main(['run', 's.toml', '--out', 'o', '--quiet'{}]) == 0"
    assert _imported_after(run.format(""), tmp_path) == []
    assert not (tmp_path / "o" / "slowdown.png").exists()
    assert "matplotlib" in _imported_after(run.format(", '--plot'"), tmp_path)
    assert (tmp_path / "o" / "slowdown.png").stat().st_size > 0


def _saved(r, tmp_path, name: str, **kw) -> pd.DataFrame:
    r.save(tmp_path / name, plot=False, **kw)
    return pd.read_parquet(tmp_path / name / "flows.parquet")


def test_flows_written_from_rust_read_back_as_the_result_dataframe(tmp_path, small_spec):
    spec = dict(small_spec, duration_us=1500.0)  # unfinished flows: nullable end and fct
    from_rust = _saved(dcnsim.run(spec), tmp_path, "rust")
    r = dcnsim.run(spec)
    flows = r.flows  # read first: save writes this DataFrame through pyarrow
    from_pandas = _saved(r, tmp_path, "pandas")
    assert flows["end_ps"].isna().any() and str(flows["end_ps"].dtype) == "UInt64"
    assert isinstance(from_rust["workload"].dtype, pd.CategoricalDtype)
    pd.testing.assert_frame_equal(from_rust, flows, check_categorical=False)
    pd.testing.assert_frame_equal(from_rust, from_pandas, check_categorical=False)
    for table in ("queues", "switches"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "rust" / f"{table}.parquet"), getattr(r, table),
                                      check_categorical=False)
    meta = pq.read_schema(tmp_path / "rust" / "queues.parquet").metadata
    assert json.loads(meta[b"dcnsim.spec"])["seed"] == small_spec["seed"]
    assert meta[b"dcnsim.version"].decode() == dcnsim.__version__


def test_a_changed_dataframe_is_what_gets_saved(tmp_path, small_spec):
    r = dcnsim.run(small_spec)
    r.flows = r.flows[r.flows["size_bytes"] > 10_000].assign(note="big")
    back = _saved(r, tmp_path, "o")
    assert list(back["note"].unique()) == ["big"] and len(back) == len(r.flows) > 0


def test_without_derived_columns_the_store_format_is_written_from_rust(tmp_path, small_spec):
    r = dcnsim.run(small_spec)
    back = _saved(r, tmp_path, "o", derived=False)
    assert not any(c.endswith("_us") for c in back.columns)
    pd.testing.assert_frame_equal(back, r.flows.drop(columns=["start_us", "end_us", "fct_us", "ideal_fct_us"]),
                                  check_categorical=False)


def test_a_result_pickles_with_its_tables(small_spec):
    import pickle

    r = dcnsim.run(small_spec)
    back = pickle.loads(pickle.dumps(r))
    pd.testing.assert_frame_equal(back.flows, r.flows)
    pd.testing.assert_frame_equal(back.queues, r.queues)
    assert back.summary == r.summary


def test_a_table_longer_than_one_write_chunk_reads_back_whole(tmp_path, small_spec):
    r = dcnsim.run(dict(small_spec, trace={"flows": list(range(200))}))
    r.save(tmp_path, plot=False)
    back = pd.read_parquet(tmp_path / "trace.parquet")
    assert len(back) > 1 << 16, "the Rust writer hands rows over in chunks of 65,536"
    # Categories in the file are those that occur (the writer re-encodes dictionaries); values match.
    pd.testing.assert_frame_equal(back, r.trace, check_categorical=False)
