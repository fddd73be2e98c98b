"""Reproductions check themselves: each entry holds the paper's numbers with tolerances, and
`dcnsim repro NAME --check` exits non-zero, printing paper vs ours, when ours fall outside."""

import math
import tempfile

import pandas as pd
import pytest

from dcnsim import repro
from dcnsim.cli import main
from dcnsim.repro.base import Check, Repro, format_checks
from dcnsim.sweep.spec import SweepSpec
from tiny_repro import tiny_repro


def test_bounds_and_outcomes():
    c = Check("x", 10.0, 0.2, lambda df, out: df, relative=True, quick_tolerance=0.5)
    assert c.bounds(False) == (8.0, 12.0) and c.bounds(True) == (5.0, 15.0)
    entry = Repro("t", "t", "p", None, None, [c, Check("y", 1.0, 0.1, lambda df, out: 1 / 0),
                                               Check("z", 1.0, 0.0, lambda df, out: math.nan, full_only=True)])
    full = entry.check(13.0, "", quick=False)
    assert [o.ok for o in full] == [False, False, False]
    assert full[1].ours is None and "ZeroDivisionError" in full[1].note
    quick = entry.check(13.0, "", quick=True)
    assert [o.check.what for o in quick] == ["x", "y"] and quick[0].ok
    text = format_checks(full)
    assert "OUTSIDE" in text and "0 of 3 checks within the paper's tolerance; 3 outside" in text


def test_a_lower_bound_accepts_anything_above_it():
    # The paper's "over eight times shorter": 4x and 21x pass, 3.9x does not.
    c = Check("gain", 8.0, 0.5, lambda df, out: df, relative=True, at_least=True)
    assert c.bounds(False) == (4.0, math.inf)
    entry = Repro("t", "t", "p", None, None, [c])
    assert [entry.check(x, "", quick=False)[0].ok for x in (3.9, 4.0, 21.0)] == [False, True, True]


@pytest.mark.parametrize("entry", repro.REGISTRY, ids=lambda e: e.name)
def test_every_reproduction_checks_numbers_of_its_paper(entry):
    assert entry.checks, f"{entry.name} states no number of its paper"
    for c in entry.checks:
        assert c.tolerance >= 0 and math.isfinite(c.paper), c.what


def test_builds_write_no_files(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for entry in repro.REGISTRY:
        for quick in (True, False):
            for _, spec in entry.build(quick).runs():
                assert all("path" not in w for w in spec["workload"] if w["kind"] == "flow_list"), entry.name
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("tolerance,code", [(1.0, 0), (0.5, 1)])
def test_check_exits_non_zero_outside_the_tolerance(tmp_path, monkeypatch, capsys, tolerance, code):
    monkeypatch.setattr(repro, "get", lambda name: tiny_repro(tolerance))
    assert main(["repro", "tiny", "--check", "--quiet", "--workers", "1", "--out", str(tmp_path / "o")]) == code
    out = capsys.readouterr().out
    assert "flows finished  1      [" in out and ("OUTSIDE" in out) == bool(code)


def test_sender_limited_pull_sharing_matches_the_paper(tmp_path, capsys):
    """A real check end to end: NDP Fig. 21 (one 16-host run, about a second)."""
    assert main(["repro", "ndp-fig21", "--quick", "--check", "--quiet", "--workers", "1",
                 "--out", str(tmp_path / "o")]) == 0
    assert "3 of 3 checks within the paper's tolerance" in capsys.readouterr().out


def test_repro_reports_read_only_their_own_sweep(tmp_path):
    # An older definition in the same directory stays, but does not leak into this report's table.
    from dcnsim.sweep import results, run_sweep

    out = tmp_path / "o"
    entry = tiny_repro(1.0)
    run_sweep(SweepSpec(base=dict(entry.build(True).base, seed=9), name="tiny"), out, workers=1, quiet=True)
    df = run_sweep(entry.build(True), out, workers=1, quiet=True)
    assert len(df) == 1 and len(results(out)) == 2
    assert isinstance(df, pd.DataFrame)


def test_stored_reports_and_checks_only_what_the_store_holds(tmp_path, monkeypatch, capsys):
    from dcnsim.repro.base import NotRun

    def finished(df, out):
        done = df[df["status"] == "done"]
        if done.empty:
            raise NotRun("the one flow's run")
        return done["flows_finished"].iloc[0] + 1

    entry = tiny_repro(1.0)
    entry.checks = [Check("flows finished", 1.0, 1.0, finished)]
    monkeypatch.setattr(repro, "get", lambda name: entry)
    out = str(tmp_path / "o")
    # Nothing stored: nothing runs, and there is nothing to report or check.
    assert main(["repro", "tiny", "--stored", "--check", "--out", out]) == 0
    assert "0 of 1 runs stored" in capsys.readouterr().out
    # A check whose runs are missing is "not run", apart from the outside ones in the verdict.
    missing = entry.check(pd.DataFrame([{"status": "missing"}]), out, quick=False)
    assert missing[0].not_run and not missing[0].ok
    assert "not run: the one flow's run" in format_checks(missing) and "1 not run" in format_checks(missing)
    assert main(["repro", "tiny", "--check", "--quiet", "--workers", "1", "--out", out]) == 0
    capsys.readouterr()
    assert main(["repro", "tiny", "--stored", "--check", "--out", out]) == 0
    text = capsys.readouterr().out
    assert "1 of 1 runs stored" in text and "1 of 1 checks within the paper's tolerance" in text
    # The same report from a summary pack of the store, unpacked elsewhere: a sweep carried to
    # another machine or session reports and checks as the original does.
    pack = str(tmp_path / "tiny.jsonl.gz")
    assert main(["pack", out, pack]) == 0
    assert main(["unpack", pack, str(tmp_path / "copy")]) == 0
    capsys.readouterr()
    assert main(["repro", "tiny", "--stored", "--check", "--out", str(tmp_path / "copy")]) == 0
    assert capsys.readouterr().out == text.replace(out, str(tmp_path / "copy"))
