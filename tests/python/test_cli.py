"""The dcnsim command line."""

import json
import subprocess
import sys

import pytest


def dcnsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dcnsim", *args], capture_output=True, text=True, cwd=cwd)


def test_run_writes_outputs_and_prints_a_summary(tmp_path, small_toml):
    spec = tmp_path / "s.toml"
    spec.write_text(small_toml)
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    for name in ["flows.parquet", "queues.parquet", "switches.parquet", "summary.json"]:
        assert (tmp_path / "out" / name).exists(), name
    assert "slowdown" in p.stdout and "goodput" in p.stdout
    # The plot only when asked (--plot), and the closing line lists what was written.
    assert not (tmp_path / "out" / "slowdown.png").exists() and "slowdown.png" not in p.stdout
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "out"), "--plot")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "slowdown.png").stat().st_size > 0 and "slowdown.png" in p.stdout


def test_run_without_flows_writes_no_flow_table_and_refuses_what_needs_one(tmp_path, small_toml):
    spec = tmp_path / "s.toml"
    spec.write_text(small_toml)
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "out"), "--no-flows")
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in (tmp_path / "out").iterdir()) == ["queues.parquet", "summary.json",
                                                                    "switches.parquet"]
    assert "flows.parquet" not in p.stdout and "goodput" in p.stdout
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "o2"), "--no-flows", "--csv")
    assert p.returncode != 0 and "--no-flows" in p.stderr and not (tmp_path / "o2").exists()


def test_set_overrides_a_key(tmp_path, small_toml):
    spec = tmp_path / "s.toml"
    spec.write_text(small_toml)
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "o"), "--quiet", "--set", "workload[0].load=0.2",
               "--set", "seed=3")
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["spec"]["workload"][0]["load"] == 0.2 and s["seed"] == 3


@pytest.mark.parametrize(
    "edit,field",
    [
        (('load = 0.5', 'load = -0.5'), "workload[0].load"),
        (('racks = 2', 'rackz = 2'), "topology.racks"),
        (('protocol = "dctcp"', 'protocol = "dctpc"'), "transport.protocol"),
    ],
)
def test_bad_spec_exits_2_naming_the_field_without_traceback(tmp_path, small_toml, edit, field):
    spec = tmp_path / "bad.toml"
    spec.write_text(small_toml.replace(*edit))
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert f"spec error at `{field}`" in p.stderr
    assert "Traceback" not in p.stderr
    if "rackz" in edit[1]:
        assert "`rackz` is given: a misspelling?" in p.stderr


def test_missing_spec_file_exits_2_naming_it(tmp_path):
    p = dcnsim("run", "/nonexistent.toml", "--out", str(tmp_path / "o"))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("error: cannot read spec /nonexistent.toml")


def test_bad_toml_exits_2(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text("duration_us = = 3\n")
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "o"))
    assert p.returncode == 2 and f"spec error at `{spec}`: not valid TOML" in p.stderr and "Traceback" not in p.stderr


def test_shipped_demo_spec_is_examples_demo():
    from pathlib import Path

    from dcnsim.cli import demo_spec_path

    root = Path(__file__).resolve().parents[2]
    assert demo_spec_path().read_text() == (root / "examples" / "demo.toml").read_text()


def test_describe_json_and_text():
    p = dcnsim("describe", "--json")
    assert p.returncode == 0
    d = json.loads(p.stdout)
    assert "dctcp" in [x["name"] for x in d["protocols"]]
    assert any(x["path"] == "workload[].load" and x["unit"] for x in d["params"])
    t = dcnsim("describe")
    assert t.returncode == 0 and "ecn_k_packets" in t.stdout and "Gb/s" in t.stdout


def test_demo_runs(tmp_path):
    p = dcnsim("demo", "--out", str(tmp_path / "demo"), "--quiet")
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "demo" / "summary.json").read_text())
    assert s["protocol"] == "dctcp" and s["flows"]["finished"] > 100


def test_parameter_reference_doc_is_current():
    from pathlib import Path

    p = dcnsim("describe", "--markdown")
    assert p.returncode == 0
    doc = Path(__file__).resolve().parents[2] / "docs" / "parameters.md"
    assert doc.read_text() == p.stdout, \
        "docs/parameters.md is stale: run `dcnsim describe --markdown > docs/parameters.md`"


def test_csv_writes_the_flow_table_beside_parquet_with_microseconds(tmp_path, small_toml):
    import pandas as pd

    spec = tmp_path / "s.toml"
    spec.write_text(small_toml)
    p = dcnsim("run", str(spec), "--out", str(tmp_path / "o"), "--quiet", "--csv")
    assert p.returncode == 0, p.stderr
    csv = pd.read_csv(tmp_path / "o" / "flows.csv")
    parquet = pd.read_parquet(tmp_path / "o" / "flows.parquet")
    assert list(csv.columns) == list(parquet.columns) and len(csv) == len(parquet) > 0
    assert (csv["fct_us"].dropna() * 1e6).round().astype("int64").tolist() == parquet["fct_ps"].dropna().tolist()


def test_summary_numbers_never_print_in_scientific_notation():
    from dcnsim.cli import _fmt

    assert _fmt(1234.5) == "1,234"
    assert _fmt(5678.9) == "5,679"
    assert _fmt(12.3456) == "12.3"
    assert "e" not in _fmt(9999.0)


def test_summary_reports_unfinished_counted_flows_and_warnings(tmp_path):
    import dcnsim
    from dcnsim.cli import format_summary

    spec = {
        "seed": 1, "duration_us": 50.0,
        "topology": {"kind": "single_switch", "hosts": 3, "host_rate_gbps": 10.0},
        "transport": {"protocol": "dctcp"},
        "workload": [{"kind": "flow_list", "flows": [[0, 1, 10_000_000, 1.0]]}],
    }
    text = format_summary(dcnsim.run(spec).summary)
    assert "1 counted flows unfinished" in text
    assert "warning" in text


def _a_long_and_a_short_flow(long_bytes: int) -> dict:
    """Two flows at 1 us on a 3-host switch, run for 50 us: the long one may not finish."""
    return {
        "seed": 1, "duration_us": 50.0,
        "topology": {"kind": "single_switch", "hosts": 3, "host_rate_gbps": 10.0},
        "transport": {"protocol": "dctcp"},
        "workload": [{"kind": "flow_list", "flows": [[0, 1, long_bytes, 1.0], [1, 2, 1000, 1.0]]}],
    }


def test_every_slowdown_figure_says_how_many_counted_flows_it_leaves_out(tmp_path):
    """Survivorship bias (issue 11): beside each slowdown figure of the summary, the results table and
    the slowdown plots, the counted flows that had not finished; the events line leaves set-up out."""
    import dcnsim
    from dcnsim.cli import format_summary
    from dcnsim.plots import unfinished_note
    from dcnsim.sweep import flatten_summary

    spec = _a_long_and_a_short_flow(10_000_000)
    s = dcnsim.run(spec).summary
    rows = dict(line.split(None, 1) if not line.startswith("  ") else (line[:20].strip(), line[20:])
                for line in format_summary(s).splitlines())
    assert "over 1 flows; 1 counted unfinished" in rows["slowdown"]
    big = [g for g in s["slowdown_by_size"] if g["unfinished"]]
    assert len(big) == 1
    group_row = [line for line in format_summary(s).splitlines() if line.startswith(f"  {big[0]['group']} ")]
    assert "0 flows; 1 counted unfinished" in group_row[0]
    assert "set-up" in rows["events"]
    row = flatten_summary(s)
    assert row["slowdown_unfinished"] == 1 and row[f"slowdown_{big[0]['group']}_unfinished"] == 1
    import pandas as pd

    assert "1 counted flows unfinished" in unfinished_note(pd.DataFrame([row]))
    assert unfinished_note(pd.DataFrame([dict(row, slowdown_unfinished=0)])) == ""


def test_the_events_line_and_the_results_row_give_cpu_time_and_old_summaries_still_load():
    """Wall time on a shared machine measures the neighbours too: the summary, its events line and a
    sweep's results row give the event loop's CPU time; summaries stored before it existed still format."""
    import dcnsim
    from dcnsim.cli import format_summary
    from dcnsim.sweep import flatten_summary

    spec = _a_long_and_a_short_flow(100_000)
    s = dcnsim.run(spec).summary
    assert 0 < s["cpu_time_s"] <= s["wall_time_s"]
    events = [line for line in format_summary(s).splitlines() if line.startswith("events")][0]
    assert "s CPU (" in events and "M events per CPU second" in events
    assert flatten_summary(s)["cpu_time_s"] == s["cpu_time_s"]
    old = {k: v for k, v in s.items() if k not in ("cpu_time_s", "events_per_cpu_sec")}
    assert "CPU" not in [line for line in format_summary(old).splitlines() if line.startswith("events")][0]
    assert flatten_summary(old)["cpu_time_s"] is None


class _Reads(dict):
    """A summary that records the paths format_summary reads (`[{key}]` for list items)."""

    def __init__(self, value: dict, path: str, seen: set):
        super().__init__(value)
        self._path, self._seen = path, seen

    def _wrap(self, key, v):
        path = f"{self._path}.{key}" if self._path else key
        self._seen.add(path)
        if isinstance(v, dict):
            return _Reads(v, path, self._seen)
        if isinstance(v, list):
            return [_Reads(x, f"{path}[{{key}}]", self._seen) if isinstance(x, dict) else x for x in v]
        return v

    def __getitem__(self, key):
        return self._wrap(key, super().__getitem__(key))

    def get(self, key, default=None):
        return self._wrap(key, super().__getitem__(key)) if key in self else default


def test_the_run_table_reads_only_fields_of_the_summary_schema():
    import json as _json

    from dcnsim import _core
    from dcnsim.cli import format_summary
    from dcnsim.spec import run as run_spec

    spec = {"seed": 1, "duration_us": 300.0, "setup": "ndp-paper",
            "topology": {"kind": "fat_tree", "k": 4, "host_rate_gbps": 10.0},
            "workload": [{"kind": "permutation", "size_bytes": 100_000}]}
    seen: set = set()
    format_summary(_Reads(run_spec(spec).summary, "", seen))
    schema = [f["path"] for f in _json.loads(_core.summary_schema())]
    known = {p.split(".{key}")[0] for p in schema} | {p.rsplit(".", 1)[0] for p in schema if "." in p}
    known |= set(schema) | {p.split("[{key}]")[0] for p in schema}
    assert seen and seen <= known, sorted(seen - known)
