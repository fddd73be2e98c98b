"""The registry entry type, and the paper's numbers each entry checks ours against."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import pandas as pd

    from ..sweep.spec import SweepSpec

# measure(results DataFrame, out dir) -> our number
Measure = Callable[["pd.DataFrame", str], float]


class NotRun(LookupError):
    """A measure's runs are not among the finished ones (a partial sweep, `dcnsim repro --stored`)."""


@dataclass(frozen=True)
class Check:
    """One number of the paper, and how far ours may be from it.

    Ours passes when |ours - paper| <= tolerance (with `relative`, tolerance x |paper|). The quick
    variants run smaller set-ups than the paper: `quick_tolerance` replaces the tolerance there, and
    a check with `full_only` is not made on them. A check `at_least` has no upper bound: for the
    paper's lower bounds ("over eight times shorter")."""

    what: str
    paper: float
    tolerance: float
    measure: Measure
    relative: bool = False
    quick_tolerance: Optional[float] = None
    full_only: bool = False
    at_least: bool = False

    def bounds(self, quick: bool) -> Tuple[float, float]:
        """The accepted range of ours: (low, high)."""
        tol = self.quick_tolerance if quick and self.quick_tolerance is not None else self.tolerance
        span = tol * abs(self.paper) if self.relative else tol
        return self.paper - span, math.inf if self.at_least else self.paper + span


@dataclass(frozen=True)
class Outcome:
    check: Check
    ours: Optional[float]  # None when it could not be measured (a run failed or is missing)
    low: float
    high: float
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.ours is not None and not math.isnan(self.ours) and self.low <= self.ours <= self.high

    @property
    def not_run(self) -> bool:
        return self.note.startswith("not run")


@dataclass
class Repro:
    name: str
    title: str
    paper: str
    build: Callable[[bool], SweepSpec]  # quick -> the sweep
    report: Callable[[pd.DataFrame, str], str]  # (results DataFrame, out dir) -> printable text
    checks: Sequence[Check] = field(default_factory=list)

    def check(self, df: pd.DataFrame, out: str, quick: bool) -> List[Outcome]:
        """Measures every check that applies (quick or full) on a finished sweep."""
        outcomes: List[Outcome] = []
        for c in self.checks:
            if quick and c.full_only:
                continue
            low, high = c.bounds(quick)
            try:
                ours, note = float(c.measure(df, out)), ""
            except NotRun as e:
                ours, note = None, f"not run: {e}"
            except Exception as e:  # a run that failed or is missing: report it, never crash the check
                ours, note = None, f"could not measure: {type(e).__name__}: {e}"
            outcomes.append(Outcome(c, ours, low, high, note))
        return outcomes


def _num(x: float) -> str:
    return f"{x:.4g}"


def format_checks(outcomes: List[Outcome]) -> str:
    """Paper vs ours, one line per check, and a verdict."""
    if not outcomes:
        return "no checks for this variant"
    rows = [("check", "paper", "accepted", "ours", "")]
    for o in outcomes:
        ours = o.note if o.ours is None else _num(o.ours)
        rows.append((o.check.what, _num(o.check.paper), f"[{_num(o.low)}, {_num(o.high)}]", ours,
                     "ok" if o.ok else "not run" if o.not_run else "OUTSIDE"))
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    missing = sum(o.not_run for o in outcomes)
    bad = sum(not o.ok and not o.not_run for o in outcomes)
    verdict = f"{len(outcomes) - bad - missing} of {len(outcomes)} checks within the paper's tolerance"
    return "\n".join(lines + [verdict + ("" if not bad else f"; {bad} outside")
                               + ("" if not missing else f"; {missing} not run")])
