"""Every user error of the command line and the API: one line naming what is wrong, exit status 2
(a SpecError or UsageError from Python), never a traceback. One test per crash class of issue 11."""

import decimal
import json
import subprocess
import sys

import numpy as np
import pytest

import dcnsim
from dcnsim.spec import set_path
from dcnsim.sweep import SweepSpec, run_sweep

TINY = {
    "seed": 1, "duration_us": 500.0,
    "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
    "queue": {"limit_packets": 100, "ecn": "step", "ecn_k_packets": 20},
    "transport": {"protocol": "dctcp"},
    "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}],
}


def subprocess_cli(*args):
    return subprocess.run([sys.executable, "-m", "dcnsim", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def dcnsim_cli(capsys):
    """The command line run in this process (the same code as `dcnsim ...`, without an interpreter
    start per call): returns (returncode, stdout, stderr) like subprocess.run."""
    from dcnsim.cli import main

    def call(*args):
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:
            code = e.code
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out.out, out.err)

    return call


def one_line_error(p, *fragments):
    """Exit 2, a single `error: ...` line on stderr holding every fragment, no traceback."""
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


@pytest.fixture
def spec_file(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(
        "seed = 1\nduration_us = 500.0\n[topology]\nkind = \"single_switch\"\nhosts = 4\nhost_rate_gbps = 10.0\n"
        "[transport]\nprotocol = \"dctcp\"\n[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"fb_hadoop\"\n")
    return p


@pytest.mark.parametrize("args", [["--help"], ["-h"], *[[c, "--help"] for c in
                                   ["run", "describe", "demo", "sweep", "results", "plot", "repro"]]])
def test_help_works_for_every_command(dcnsim_cli, args):
    p = dcnsim_cli(*args)
    assert p.returncode == 0 and "usage: dcnsim" in p.stdout, p.stderr


def test_a_binary_spec_file_is_named(dcnsim_cli, tmp_path):
    bad = tmp_path / "spec.toml"
    bad.write_bytes(bytes(range(256)) * 4)
    one_line_error(subprocess_cli("run", bad, "--out", tmp_path / "o"), str(bad), "not a text file")
    sweep = tmp_path / "sweep.toml"
    sweep.write_bytes(b"\xff\xfe\x00name")
    one_line_error(dcnsim_cli("sweep", sweep, "--out", tmp_path / "o"), str(sweep), "not a text file")


@pytest.mark.parametrize("path,fragment", [
    ("workload[x].load", "not a key or key[index]"),
    ("seed.x", "`seed` is 1, not a table"),
    ("workload[5].load", "index 5 is out of range"),
    ("topology..hosts", "empty key"),
    ("transport[0]", "not a list"),
])
def test_set_with_a_malformed_path_names_it(dcnsim_cli, spec_file, tmp_path, path, fragment):
    one_line_error(dcnsim_cli("run", spec_file, "--out", tmp_path / "o", "--set", f"{path}=1"), f"`{path}`", fragment)
    with pytest.raises(dcnsim.SpecError) as e:
        set_path(json.loads(json.dumps(TINY)), path, 1)
    assert e.value.field == path


@pytest.mark.parametrize("flt,fragment", [
    ("seed / 0 > 1", "division by zero"),
    ("seed < 'a'", "not supported between"),
    ("seed > 100", "matches no run"),
    ("'ab' * 1000000000000 == 'x'", "limit is 10,000 items"),
    ("[1, 2] * 99999 == []", "limit is 10,000 items"),
])
def test_filters_that_cannot_be_evaluated_or_match_nothing(dcnsim_cli, tmp_path, spec_file, flt, fragment):
    sweep = tmp_path / "sw.toml"
    sweep.write_text(f'base = "{spec_file.name}"\nfilter = "{flt}"\n[axes]\nseed = [1, 2]\n')
    one_line_error(dcnsim_cli("sweep", sweep, "--out", tmp_path / "o", "--quiet"), "spec error at `filter`", fragment)
    with pytest.raises(dcnsim.SpecError) as e:
        run_sweep(SweepSpec(base=TINY, axes={"seed": [1, 2]}, filter=flt), tmp_path / "api", quiet=True)
    assert e.value.field == "filter" and fragment in e.value.message


def test_workers_must_be_positive(dcnsim_cli, tmp_path, spec_file):
    sweep = tmp_path / "sw.toml"
    sweep.write_text(f'base = "{spec_file.name}"\n[axes]\nseed = [1]\n')
    for n in ["-1", "0", "two"]:
        one_line_error(dcnsim_cli("sweep", sweep, "--out", tmp_path / "o", "--workers", n), "--workers")
    with pytest.raises(dcnsim.errors.UsageError):
        run_sweep(SweepSpec(base=TINY, axes={"seed": [1]}), tmp_path / "api", workers=-2, quiet=True)


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    out = tmp_path_factory.mktemp("store")
    run_sweep(SweepSpec(base=TINY, axes={"seed": [1, 2]}), out, workers=1, quiet=True)
    return out


@pytest.mark.parametrize("option", ["--by", "--label"])
def test_plot_with_an_unknown_column_names_it(dcnsim_cli, small_store, tmp_path, option):
    p = dcnsim_cli("plot", "fct-cdf", small_store, "--out", tmp_path / "p.png", option, "nosuchcolumn")
    one_line_error(p, option, "'nosuchcolumn'", "columns: key")


@pytest.mark.parametrize("literal,shown", [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf")])
def test_nan_or_infinity_in_a_toml_spec_names_the_field(dcnsim_cli, spec_file, tmp_path, literal, shown):
    spec_file.write_text(spec_file.read_text().replace("load = 0.5", f"load = {literal}"))
    one_line_error(dcnsim_cli("run", spec_file, "--out", tmp_path / "o"), "`workload[0].load`",
                   f"must be a finite number, got {shown}")


@pytest.mark.parametrize("value,fragment", [
    (float("nan"), "finite"), (float("inf"), "finite"), (decimal.Decimal("0.5"), "Decimal"),
    ({0.5}, "a set cannot"), (b"0.5", "a bytes cannot"), (np.float64("nan"), "finite"),
])
def test_values_json_cannot_carry_name_the_field(value, fragment):
    spec = json.loads(json.dumps(TINY))
    spec["workload"][0]["load"] = value
    for call in (dcnsim.resolve, dcnsim.run):
        with pytest.raises(dcnsim.SpecError) as e:
            call(spec)
        assert e.value.field == "workload[0].load" and fragment in e.value.message


def test_numpy_scalars_and_arrays_are_accepted():
    spec = json.loads(json.dumps(TINY))
    spec["seed"] = np.int64(3)
    spec["workload"][0]["load"] = np.float32(0.25)
    spec["topology"]["hosts"] = np.uint16(4)
    r = dcnsim.resolve(spec)
    assert r["seed"] == 3 and r["workload"][0]["load"] == 0.25 and r["topology"]["hosts"] == 4
    sweep = SweepSpec(base=spec, axes={"seed": np.arange(1, 3)})
    assert [v["seed"] for v, _ in sweep.runs()] == [1, 2]


def test_results_and_plot_on_a_single_runs_directory(dcnsim_cli, spec_file, tmp_path):
    out = tmp_path / "run"
    assert dcnsim_cli("run", spec_file, "--out", out, "--quiet").returncode == 0
    r = dcnsim_cli("results", out)
    assert r.returncode == 0 and "done" in r.stdout, r.stderr
    df = dcnsim.results(out)
    assert list(df["key"]) == ["."] and df["protocol"][0] == "dctcp"
    assert len(dcnsim.sweep_flows(out, ".")) == df["flows_started"][0]
    p = dcnsim_cli("plot", "fct-cdf", out, "--out", tmp_path / "c.png")
    assert p.returncode == 0 and (tmp_path / "c.png").exists(), p.stderr


def test_results_on_a_directory_without_results_says_what_it_expects(dcnsim_cli, tmp_path):
    one_line_error(dcnsim_cli("results", tmp_path), "holds no results", "sweep.json", "summary.json")
    one_line_error(dcnsim_cli("plot", "slowdown", tmp_path / "nope", "--out", tmp_path / "x.png"), "is not a directory")
    assert not (tmp_path / "nope").exists(), "reading must not create the directory"


def test_unknown_reproduction_is_one_line(dcnsim_cli):
    one_line_error(dcnsim_cli("repro", "no-such-figure"), "unknown reproduction", "ndp-fig14")


def test_an_out_that_is_a_file_is_refused_before_simulating(dcnsim_cli, spec_file, tmp_path, monkeypatch):
    import dcnsim.spec

    def no_simulation(*a, **k):
        raise AssertionError("simulated before checking --out")

    monkeypatch.setattr(dcnsim.spec, "run", no_simulation)
    taken = tmp_path / "results"
    taken.write_text("not a directory")
    one_line_error(dcnsim_cli("run", spec_file, "--out", taken), f"--out {taken}", "not a directory")
    sweep = tmp_path / "sw.toml"
    sweep.write_text(f'base = "{spec_file.name}"\n[axes]\nseed = [1]\n')
    one_line_error(dcnsim_cli("sweep", sweep, "--out", taken), f"--out {taken}", "not a directory")


def test_plot_outputs_matplotlib_cannot_write_or_reach_are_one_line(dcnsim_cli, small_store, tmp_path):
    one_line_error(dcnsim_cli("plot", "fct-cdf", small_store, "--out", tmp_path / "p.txt"), "'.txt'", "png")
    one_line_error(dcnsim_cli("plot", "slowdown", small_store, "--out", tmp_path / "p"), "without a suffix")
    missing = tmp_path / "no" / "such" / "p.png"
    one_line_error(dcnsim_cli("plot", "fct-cdf", small_store, "--out", missing), str(missing),
                   "No such file or directory")


def test_a_spec_file_with_a_byte_order_mark_is_read(spec_file, tmp_path):
    from dcnsim.cli import build_spec

    spec_file.write_bytes(b"\xef\xbb\xbf" + spec_file.read_bytes())
    assert build_spec(spec_file, [])["topology"]["hosts"] == 4


def test_api_inputs_that_cannot_be_a_spec_name_what_is_wrong(tmp_path):
    spec = json.loads(json.dumps(TINY))
    spec["seed"] = 2**70
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run(spec)
    assert e.value.field == "seed" and "64-bit" in e.value.message
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run("  \n")
    assert e.value.field == "spec" and "empty" in e.value.message
    taken = tmp_path / "file"
    taken.write_text("x")
    with pytest.raises(dcnsim.errors.UsageError, match="not a directory"):
        run_sweep(SweepSpec(base=TINY, axes={"seed": [1]}), taken, quiet=True)


def test_a_flow_list_from_a_numpy_float_array_runs_as_its_integers():
    # np.array of [src, dst, size, start] rows is a float array (start_us is a float).
    rows = [[0, 1, 20_000, 0.0], [2, 3, 5_000, 1.5]]
    spec = json.loads(json.dumps(TINY))
    spec["workload"] = [{"kind": "flow_list", "flows": rows}]
    as_ints = dcnsim.run(spec)
    spec["workload"][0]["flows"] = np.array(rows)
    as_floats = dcnsim.run(spec)
    assert as_floats.flows["fct_ps"].tolist() == as_ints.flows["fct_ps"].tolist()
    spec["workload"][0]["flows"] = np.array([[0.5, 1, 100, 0.0]])
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run(spec)
    assert e.value.field == "workload[0].flows[0]" and "not a host id" in e.value.message
