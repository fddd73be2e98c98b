"""Docs tables of reproduction results are generated from the runs (`python -m dcnsim.repro.report`):
the marked block is rewritten with each check's paper value, accepted range and our measured
number, the rest of the file is left alone, and numbers measured earlier are kept until measured
again."""

import json

from dcnsim.repro import report
from tiny_repro import tiny_repro

DOC = """# Results

Typed prose stays.

<!-- repro-checks: ti* -->
| stale | typed | table |
<!-- /repro-checks -->

<!-- repro-checks: other-* -->
<!-- /repro-checks -->
After.
"""


def test_the_marked_block_is_rewritten_from_the_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "REGISTRY", [tiny_repro(0.5, "flows finished, plus one")])
    doc, js = tmp_path / "doc.md", tmp_path / "checks.json"
    doc.write_text(DOC)
    args = ["--root", str(tmp_path / "runs"), "--json", str(js), "--workers", "1", "--write", str(doc)]
    assert report.main(["--run", *args]) == 0
    text = doc.read_text()
    assert "| stale | typed | table |" not in text
    assert text.startswith("# Results\n\nTyped prose stays.\n") and text.endswith("<!-- /repro-checks -->\nAfter.\n")
    row = next(line for line in text.splitlines() if line.startswith("| `tiny`"))
    # One flow finished: ours is 2, outside [0.5, 1.5]; the full variant was never run.
    assert "| flows finished, plus one | paper | 1: one flow of one run | 0.5 to 1.5 | 2 **outside** | - |" in row
    stored = json.loads(js.read_text())["tiny"]
    assert stored["quick"][0]["ours"] == 2.0 and not stored["quick"][0]["ok"] and "full" not in stored
    # The other block matches no entry: an empty table, not the old text.
    assert text.count("| entry | check |") == 2


def test_numbers_are_kept_until_measured_again(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "REGISTRY", [tiny_repro(1.5, "flows finished, plus one")])
    js = tmp_path / "checks.json"
    js.write_text(json.dumps({"tiny": {"quick": [{"what": "flows finished, plus one", "paper": 1.0, "low": 0.0,
                                                   "high": 2.0, "ours": 1.9, "ok": True, "note": ""}],
                                        "quick_at": "abc 2020-01-01"}}))
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    # Nothing stored under this root: reading it measures nothing, so the old numbers stay.
    assert report.main(["--stored", "--root", str(tmp_path / "none"), "--json", str(js), "--write", str(doc)]) == 0
    assert "| 1.9 | - |" in doc.read_text() and "<!-- measured tiny: quick abc 2020-01-01 -->" in doc.read_text()


def test_stored_numbers_are_judged_by_the_bands_as_they_are_now(monkeypatch):
    # A number measured under a wider band is outside the narrower one; a check no longer defined goes.
    monkeypatch.setattr(report, "REGISTRY", [tiny_repro(0.5, "flows finished, plus one")])
    old = {"what": "flows finished, plus one", "paper": 1.0, "low": 0.0, "high": 2.0, "ours": 1.9, "ok": True,
           "note": ""}
    gone = dict(old, what="a check rewritten since")
    data = report.rejudge({"tiny": {"quick": [old, gone]}})
    assert data["tiny"]["quick"] == [dict(old, kind="paper", low=0.5, high=1.5, lower_bound=False, ok=False)]
