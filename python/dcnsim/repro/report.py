"""Docs tables of reproduction results, generated from the runs rather than typed.

    python -m dcnsim.repro.report --run [--only NAME ...] [--skip NAME ...]   # rerun quick variants
    python -m dcnsim.repro.report --stored                                   # read what the stores hold
    python -m dcnsim.repro.report --write docs/experiments.md docs/protocols/ndp.md

Each entry's checks (`Repro.check`) are measured on its quick and full variants, in the stores
`dcnsim repro` uses by default (`out/repro/NAME-quick`, `out/repro/NAME`; `--root` moves them):
`--run` runs the quick variants (resuming, as `dcnsim repro` does), `--stored` only reads them, and
full variants are always only read (run them with `dcnsim repro NAME`). The outcomes, with the
commit and date they were measured at, are merged into `docs/repro-checks.json` (an entry
measured again replaces its old numbers; the others are kept), and `--write` rewrites every block
of a Markdown file between `<!-- repro-checks: PATTERN -->` and `<!-- /repro-checks -->` with the
table of the entries whose names match PATTERN (shell-style, e.g. `ndp-*`): per check its kind
(`base.Kind`: paper, at least, at most, ordering, ours), what it holds ours to and why, the accepted
range and ours. Stored numbers are judged by the checks' bands as they are now: a band rewritten
since keeps the measured number, and the outcomes of checks no longer defined are dropped (a check
whose measure changed takes a new name, and is "-" until measured again).

A run's key covers its spec and the dcnsim version, not the code: after a change to the simulator,
measure into a new root (`--root out/repro-$(git rev-parse --short HEAD)`), or stored runs of the
old code are reported again."""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import math
import re
import subprocess
import sys
from pathlib import Path

from . import REGISTRY, format_checks
from .base import Kind, Outcome

DEFAULT_JSON = Path(__file__).resolve().parents[3] / "docs" / "repro-checks.json"
NOT_RUN = "-"  # no stored run of the variant when the numbers were measured
BLOCK = re.compile(r"(<!-- repro-checks: (?P<pat>\S+) -->\n)(?P<body>.*?)(<!-- /repro-checks -->)", re.S)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measure(entry, quick: bool, root: str, run: bool, workers=None):
    """The entry's check outcomes on one variant as plain data, or None when nothing is stored."""
    from ..sweep import run_sweep, stored_sweep

    out = f"{root}/{entry.name}{'-quick' if quick else ''}"
    if run:
        df = run_sweep(entry.build(quick), out, workers=workers, quiet=True)
    elif Path(out, "sweep.json").exists():
        df = stored_sweep(entry.build(quick), out)
    else:
        return None
    if not (df["status"] == "done").any():
        return None
    outcomes = entry.check(df, out, quick)
    print(f"{entry.name} ({'quick' if quick else 'full'}):\n{format_checks(outcomes)}\n", flush=True)
    return [{"what": o.check.what, "kind": o.check.kind.value, "paper": o.check.paper, "low": o.low,
             "high": o.high, "ours": o.ours, "lower_bound": o.lower_bound, "ok": o.ok, "note": o.note}
            for o in outcomes]


def _num(x) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if 1000 <= abs(x) < math.inf else f"{x:.3g}"


def _cell(c, check, quick: bool) -> str:
    """Ours as measured, judged by the check's band as it is now (a band rewritten since the number
    was measured judges the stored number again; the number itself is the run's)."""
    if c is None:
        return NOT_RUN
    if c["ours"] is None:
        return NOT_RUN if c["note"].startswith("not run") else "failed"
    low, high = check.bounds(quick)
    bound = c.get("lower_bound", False)
    ok = Outcome(check, c["ours"], low, high, lower_bound=bound).ok
    return ("> " if bound else "") + _num(c["ours"]) + ("" if ok else " **outside**")


def _range(low: float, high: float) -> str:
    if high == math.inf:
        return f">= {_num(low)}"
    if low == -math.inf:
        return f"<= {_num(high)}"
    return f"{_num(low)} to {_num(high)}"


def _claim(c) -> str:
    """The check's number or bound, and its reason (a `|` would split the Markdown cell)."""
    head = {Kind.PAPER: _num(c.paper), Kind.AT_LEAST: f">= {_num(c.paper)}", Kind.AT_MOST: f"<= {_num(c.paper)}",
            Kind.ORDERING: " > ".join(c.names), Kind.OURS: "ours"}[c.kind]
    reason = c.reason.removeprefix("ours: ") if c.kind is Kind.OURS else c.reason
    return f"{head}: {reason}".replace("|", "/")


def table(data: dict, pattern: str) -> str:
    """One row per check of every entry matching `pattern`: its kind, what it holds ours to (the
    paper's number, bound or ordering, or our own criterion), the accepted range (the quick variant's
    when it differs), and ours on the quick and the full variant ("> x": not settled within the run)."""
    rows = ["| entry | check | kind | claim | accepted | quick: ours | full: ours |", "|---|---|---|---|---|---|---|"]
    stamps = []
    for entry in [r for r in REGISTRY if fnmatch.fnmatch(r.name, pattern)]:
        d = data.get(entry.name, {})
        measured = {v: {c["what"]: c for c in d.get(v) or []} for v in ("quick", "full")}
        for c in entry.checks:
            accepted = _range(*c.bounds(False))
            if not c.full_only and c.bounds(True) != c.bounds(False):
                accepted += f" (quick: {_range(*c.bounds(True))}: {c.quick_reason})"
            quick = "full only" if c.full_only else _cell(measured["quick"].get(c.what), c, True)
            rows.append(f"| `{entry.name}` | {c.what} | {c.kind.value} | {_claim(c)} | {accepted} | {quick} | "
                        f"{_cell(measured['full'].get(c.what), c, False)} |")
        stamp = ", ".join(f"{v} {d[v + '_at']}" for v in ("quick", "full") if d.get(v + "_at"))
        if stamp:
            stamps.append(f"{entry.name}: {stamp}")
    # When (commit, date) each entry's numbers were measured, out of the rendered page.
    return "\n".join(rows) + "\n" + "".join(f"<!-- measured {s} -->\n" for s in stamps)


def _judged(record: dict, check, quick: bool) -> dict:
    """A stored outcome with the check's kind and band as they are now (the number stays the run's)."""
    low, high = check.bounds(quick)
    ours, bound = record["ours"], record.get("lower_bound", False)
    ok = ours is not None and Outcome(check, ours, low, high, lower_bound=bound).ok
    return dict(record, kind=check.kind.value, paper=check.paper, low=low, high=high, lower_bound=bound, ok=ok)


def rejudge(data: dict) -> dict:
    """Every stored outcome judged by its check's current band; outcomes of checks no longer defined
    (or no longer made on that variant) are dropped: a rewritten check is measured again under its
    new name."""
    for entry in REGISTRY:
        d = data.get(entry.name, {})
        for variant in ("quick", "full"):
            if d.get(variant) is None:
                continue
            quick = variant == "quick"
            checks = {c.what: c for c in entry.checks if not (quick and c.full_only)}
            d[variant] = [_judged(r, checks[r["what"]], quick) for r in d[variant] if r["what"] in checks]
    return data


def _dump(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def write(doc: Path, data: dict) -> int:
    """Rewrites every marked block of `doc`; returns how many."""
    text = doc.read_text()
    new, n = BLOCK.subn(lambda m: m.group(1) + table(data, m.group("pat")) + m.group(4), text)
    if n:
        doc.write_text(new)
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dcnsim.repro.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="store_true", help="run the quick variants (full ones are only read)")
    ap.add_argument("--stored", action="store_true", help="read the stores, run nothing")
    ap.add_argument("--only", nargs="*", default=None, help="entries to measure (default: all)")
    ap.add_argument("--skip", nargs="*", default=[], help="entries not to measure (their numbers are kept)")
    ap.add_argument("--root", default="out/repro")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ap.add_argument("--write", nargs="*", type=Path, default=[], help="Markdown files whose blocks to rewrite")
    ap.add_argument("--workers", type=int)
    args = ap.parse_args(argv)
    data = json.loads(args.json.read_text()) if args.json.exists() else {}
    stamp = f"{_commit()} {datetime.date.today().isoformat()}"
    if args.run or args.stored:
        for entry in REGISTRY:
            if (args.only is not None and entry.name not in args.only) or entry.name in args.skip:
                continue
            d = data.setdefault(entry.name, {})
            for quick in (True, False):
                got = measure(entry, quick, args.root, args.run and quick, args.workers)
                variant = "quick" if quick else "full"
                if got is not None:
                    d[variant], d[variant + "_at"] = got, stamp
            # After every entry: a long regeneration stopped part-way keeps what it measured.
            _dump(args.json, data)
    if data:
        _dump(args.json, rejudge(data))
    for doc in args.write:
        print(f"{doc}: {write(doc, data)} block(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
