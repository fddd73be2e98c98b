"""Reproductions check themselves: each entry holds the paper's numbers with tolerances, and
`dcnsim repro NAME --check` exits non-zero, printing paper vs ours, when ours fall outside."""

import math
import tempfile

import pandas as pd
import pytest

from dcnsim import repro
from dcnsim.cli import main
from dcnsim.repro.base import (
    FRACTION,
    SLOWDOWN,
    Check,
    Kind,
    LowerBound,
    Repro,
    at_least,
    at_most,
    band_faults,
    format_checks,
    ordering,
    ours,
    paper_value,
)
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
    assert "OUTSIDE" in text and "0 of 3 checks within their accepted range; 3 outside" in text


def test_a_lower_bound_accepts_anything_above_it():
    # The paper's "over eight times shorter": 4x and 21x pass, 3.9x does not.
    c = at_least("gain", 8.0, lambda df, out: df, slack=0.5, relative=True, claim="over eight times")
    assert c.bounds(False) == (4.0, math.inf) and c.claim() == ">= 8 (one-sided claim)"
    entry = Repro("t", "t", "p", None, None, [c])
    assert [entry.check(x, "", quick=False)[0].ok for x in (3.9, 4.0, 21.0)] == [False, True, True]


def _measured(x):
    return lambda df, out: x


def test_each_kind_prints_what_it_holds_ours_to():
    assert paper_value("x", 0.25, 0.1, _measured(0), reason="r").claim() == "0.25 +- 0.1 (paper)"
    assert at_most("x", 4.0, _measured(0), claim="fewer than four").claim() == "<= 4 (one-sided claim)"
    assert ordering("x", "DCTCP", "NDP", _measured(0), margin=1.1, claim="c").claim() == "DCTCP > NDP (ordering)"
    assert ours("x", 0.0, 0.9, _measured(0), reason="r").claim() == "ours: 0 to 0.9"
    text = format_checks(Repro("t", "t", "p", None, None, [ours("x", 0.0, 0.9, _measured(0.5), reason="r")])
                         .check(None, "", quick=False))
    assert "ours: 0 to 0.9" in text and "1 of 1 checks within their accepted range" in text


def test_bands_are_clipped_to_the_metrics_physical_range():
    # A slowdown is never below 1: "1 +- 2.5" accepts 1 to 3.5, not -1.5.
    assert Check("s", 1.0, 2.5, _measured(0), physical=SLOWDOWN).bounds(False) == (1.0, 3.5)
    assert at_most("f", 0.5, _measured(0), claim="c", physical=FRACTION).bounds(False) == (0.0, 0.5)


def test_a_band_that_cannot_fail_or_holds_its_baseline_is_found():
    assert band_faults(ours("f", 0.0, 1.0, _measured(0), reason="r", physical=FRACTION), False)  # every value
    assert band_faults(ours("r", 0.0, 1.0, _measured(0), reason="r", baseline=1.0), False)  # "no effect" passes
    assert band_faults(paper_value("p", 0.07, 0.2, _measured(0), reason="r"), False)  # wider than the value
    assert band_faults(ordering("o", "a", "b", _measured(0), claim="c"), False)  # a tie passes
    assert not band_faults(ordering("o", "a", "b", _measured(0), margin=1.05, claim="c"), False)
    assert not band_faults(paper_value("p", 0.07, 0.5, _measured(0), relative=True, reason="r", baseline=0.0), True)


def test_a_value_known_only_from_below_passes_only_an_open_band():
    # "Not settled within the run": 447 RTTs and more.
    unsettled = _measured(LowerBound(447.0))
    entry = Repro("t", "t", "p", None, None, [paper_value("x", 50.0, 0.5, unsettled, relative=True, reason="r"),
                                              at_least("y", 10.0, unsettled, claim="many RTTs")])
    outcomes = entry.check(None, "", quick=False)
    assert [o.ok for o in outcomes] == [False, True] and all(o.lower_bound for o in outcomes)
    assert "> 447 (not settled within the run)" in format_checks(outcomes)


@pytest.mark.parametrize("entry", repro.REGISTRY, ids=lambda e: e.name)
def test_every_reproduction_check_states_its_kind_and_can_fail(entry):
    """Every check says what it is and why its band is what it is; no band holds every physically
    possible value, or the value of the baseline it is meant to tell ours from, on either variant."""
    assert entry.checks, f"{entry.name} states no check"
    for c in entry.checks:
        assert isinstance(c.kind, Kind) and c.reason, c.what
        quick_band_differs = not c.full_only and c.bounds(True) != c.bounds(False)
        assert c.quick_reason or not quick_band_differs, f"{c.what}: why the quick band differs"
        assert c.tolerance >= 0 and math.isfinite(c.paper), c.what
        assert c.kind is not Kind.ORDERING or len(c.names) == 2, c.what
        for quick in (False,) if c.full_only else (False, True):
            assert not band_faults(c, quick), (c.what, quick, band_faults(c, quick))


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
    assert "flows finished  1 +- " in out and ("OUTSIDE" in out) == bool(code)


def test_sender_limited_pull_sharing_matches_the_paper(tmp_path, capsys):
    """A real check end to end: NDP Fig. 21 (one 16-host run, about a second)."""
    assert main(["repro", "ndp-fig21", "--quick", "--check", "--quiet", "--workers", "1",
                 "--out", str(tmp_path / "o")]) == 0
    assert "3 of 3 checks within their accepted range" in capsys.readouterr().out


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
    entry.checks = [paper_value("flows finished", 1.0, 1.0, finished, reason="one flow")]
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
    assert "1 of 1 runs stored" in text and "1 of 1 checks within their accepted range" in text
    # The same report from a summary pack of the store, unpacked elsewhere: a sweep carried to
    # another machine or session reports and checks as the original does.
    pack = str(tmp_path / "tiny.jsonl.gz")
    assert main(["pack", out, pack]) == 0
    assert main(["unpack", pack, str(tmp_path / "copy")]) == 0
    capsys.readouterr()
    assert main(["repro", "tiny", "--stored", "--check", "--out", str(tmp_path / "copy")]) == 0
    assert capsys.readouterr().out == text.replace(out, str(tmp_path / "copy"))
