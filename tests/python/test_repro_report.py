"""Docs tables of reproduction results are generated from the runs (`python -m dcnsim.repro.report`):
the marked block is rewritten with each check's paper value, accepted range and our measured
number, the rest of the file is left alone, and numbers measured earlier are kept until measured
again."""

import json

from dcnsim.repro import report
from dcnsim.repro.base import Check, Repro
from dcnsim.sweep.spec import SweepSpec

DOC = """# Results

Typed prose stays.

<!-- repro-checks: ti* -->
| stale | typed | table |
<!-- /repro-checks -->

<!-- repro-checks: other-* -->
<!-- /repro-checks -->
After.
"""


def _tiny(tolerance):
    base = {"duration_us": 300.0, "topology": {"kind": "single_switch", "hosts": 2, "host_rate_gbps": 10.0},
            "transport": {"protocol": "dctcp"}, "workload": [{"kind": "flow_list", "flows": [[0, 1, 10_000, 0.0]]}]}
    finished = Check("flows finished, plus one", 1.0, tolerance, lambda df, out: df["flows_finished"].iloc[0] + 1)
    return Repro("tiny", "one flow", "none", lambda quick: SweepSpec(base=base, name="tiny"),
                 lambda df, out: "report", [finished])


def test_the_marked_block_is_rewritten_from_the_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "REGISTRY", [_tiny(0.5)])
    doc, js = tmp_path / "doc.md", tmp_path / "checks.json"
    doc.write_text(DOC)
    args = ["--root", str(tmp_path / "runs"), "--json", str(js), "--workers", "1", "--write", str(doc)]
    assert report.main(["--run", *args]) == 0
    text = doc.read_text()
    assert "| stale | typed | table |" not in text
    assert text.startswith("# Results\n\nTyped prose stays.\n") and text.endswith("<!-- /repro-checks -->\nAfter.\n")
    row = next(line for line in text.splitlines() if line.startswith("| `tiny`"))
    # One flow finished: ours is 2, outside [0.5, 1.5]; the full variant was never run.
    assert "| flows finished, plus one | 1 | 0.5 to 1.5 | 2 **outside** | - |" in row
    stored = json.loads(js.read_text())["tiny"]
    assert stored["quick"][0]["ours"] == 2.0 and not stored["quick"][0]["ok"] and "full" not in stored
    # The other block matches no entry: an empty table, not the old text.
    assert text.count("| entry | check |") == 2


def test_numbers_are_kept_until_measured_again(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "REGISTRY", [_tiny(1.5)])
    js = tmp_path / "checks.json"
    js.write_text(json.dumps({"tiny": {"quick": [{"what": "flows finished, plus one", "paper": 1.0, "low": 0.0,
                                                   "high": 2.0, "ours": 1.9, "ok": True, "note": ""}],
                                        "quick_at": "abc 2020-01-01"}}))
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    # Nothing stored under this root: reading it measures nothing, so the old numbers stay.
    assert report.main(["--stored", "--root", str(tmp_path / "none"), "--json", str(js), "--write", str(doc)]) == 0
    assert "| 1.9 | - |" in doc.read_text() and "<!-- measured tiny: quick abc 2020-01-01 -->" in doc.read_text()
