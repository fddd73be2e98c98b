"""The registry entry type, and the checks each entry makes of ours against its paper.

A check states its kind (`Kind`): the paper's number with a tolerance and why the tolerance is what it
is (`paper_value`); a one-sided claim of the paper, "at least" or "at most" a bound (`at_least`,
`at_most`); an ordering the paper states, one quantity above another, measured as their ratio
(`ordering`); or our own criterion where the paper gives no number, labelled so (`ours`). Every
check knows the physically possible range of its metric (`physical`: a slowdown is never below 1, a
fraction lies in [0, 1]) and may name the value of a baseline it is meant to tell ours from
(`baseline`, e.g. "no effect" = 1 for a ratio with / without a mechanism): the accepted band never
holds every possible value, nor the baseline's."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple, TypedDict

if TYPE_CHECKING:
    import pandas as pd

    from ..sweep.spec import SweepSpec

# measure(results DataFrame, out dir) -> our number
Measure = Callable[["pd.DataFrame", str], float]
Range = Tuple[float, float]

# Physically possible values of a metric.
ANY: Range = (-math.inf, math.inf)
NONNEGATIVE: Range = (0.0, math.inf)  # times, queues, counts, rates, ratios of them
FRACTION: Range = (0.0, 1.0)  # shares, utilisations, loss rates
SLOWDOWN: Range = (1.0, math.inf)  # a completion time over its ideal


class NotRun(LookupError):
    """A measure's runs are not among the finished ones (a partial sweep, `dcnsim repro --stored`)."""


class Kind(str, Enum):
    PAPER = "paper"  # the paper's number, +- a tolerance with its reason
    AT_LEAST = "at least"  # the paper's one-sided claim: ours >= its bound
    AT_MOST = "at most"  # the paper's one-sided claim: ours <= its bound
    ORDERING = "ordering"  # the paper's "A above B": A / B >= 1 (or a stated margin)
    OURS = "ours"  # our own criterion where the paper gives no number


@dataclass(frozen=True)
class Check:
    """One claim of the paper (or of ours, `Kind.OURS`), and the band ours must fall in.

    `paper` is the paper's number (`PAPER`), its bound (`AT_LEAST`, `AT_MOST`), the ratio's least
    value (`ORDERING`) or the band's lower end (`OURS`, with `upper` its upper end). The tolerance
    widens a number into a band (or a bound away from the paper's: `relative` makes it a share of
    the number); `reason` says why it is what it is, or states the paper's claim. The quick
    variants run smaller set-ups: `quick_tolerance` (`quick_band` for `OURS`) replaces the band
    there, with `quick_reason`; a check with `full_only` is not made on them. The band is clipped to
    the metric's `physical` range."""

    what: str
    paper: float
    tolerance: float
    measure: Measure
    relative: bool = False
    quick_tolerance: Optional[float] = None
    full_only: bool = False
    kind: Kind = Kind.PAPER
    reason: str = ""
    quick_reason: str = ""
    physical: Range = NONNEGATIVE
    baseline: Optional[float] = None
    upper: Optional[float] = None  # OURS: the band's upper end
    quick_band: Optional[Range] = None  # OURS: the quick variant's band
    names: Tuple[str, ...] = ()  # ORDERING: (above, below)

    def _span(self, quick: bool) -> float:
        tol = self.quick_tolerance if quick and self.quick_tolerance is not None else self.tolerance
        return tol * abs(self.paper) if self.relative else tol

    def _upper(self) -> float:
        """An OURS check's upper end (`ours` always sets it)."""
        if self.upper is None:
            raise ValueError(f"check {self.what!r}: an OURS check needs its upper end (`upper`)")
        return self.upper

    def _raw_bounds(self, quick: bool) -> Range:
        if self.kind is Kind.OURS:
            if quick and self.quick_band is not None:
                return self.quick_band
            return self.paper, self._upper()
        span = self._span(quick)
        if self.kind in (Kind.AT_LEAST, Kind.ORDERING):
            return self.paper - span, math.inf
        if self.kind is Kind.AT_MOST:
            return -math.inf, self.paper + span
        return self.paper - span, self.paper + span

    def bounds(self, quick: bool) -> Range:
        """The accepted band, inside the metric's physical range."""
        low, high = self._raw_bounds(quick)
        return max(low, self.physical[0]), min(high, self.physical[1])

    def claim(self) -> str:
        """What the check holds ours to, kind first: "0.25 +- 0.1", ">= 4 (one-sided claim)", ..."""
        if self.kind is Kind.OURS:
            return f"ours: {_num(self.paper)} to {_num(self._upper())}"
        if self.kind is Kind.ORDERING:
            return f"{self.names[0]} > {self.names[1]} (ordering)" if self.names else "ordering"
        if self.kind is Kind.AT_LEAST:
            return f">= {_num(self.paper)} (one-sided claim)"
        if self.kind is Kind.AT_MOST:
            return f"<= {_num(self.paper)} (one-sided claim)"
        tol = f"{self.tolerance:.0%}" if self.relative else _num(self.tolerance)
        return f"{_num(self.paper)} +- {tol} (paper)"


class CheckOptions(TypedDict, total=False):
    """Keyword options of the check helpers below, for a module whose checks share some (`**OPTIONS`)."""

    reason: str
    claim: str
    relative: bool
    quick_tolerance: Optional[float]
    full_only: bool
    quick_reason: str
    physical: Range
    baseline: Optional[float]
    quick_band: Optional[Range]


def paper_value(what: str, value: float, tolerance: float, measure: Measure, *, reason: str, **kw: Any) -> Check:
    """The paper's number, +- a tolerance whose reason is stated."""
    return Check(what, value, tolerance, measure, kind=Kind.PAPER, reason=reason, **kw)


def paper_value_or_at_most(what: str, value: float, tolerance: float, measure: Measure, *, reason: str,
                           **kw: Any) -> Check:
    """The paper's number, or "at most" it plus the tolerance where the band would reach the metric's
    physical lower bound on either variant (a slowdown's 1, a queue's 0): a one-sided claim, said so."""
    c = paper_value(what, value, tolerance, measure, reason=reason, **kw)
    if not any(c._raw_bounds(quick)[0] <= c.physical[0] for quick in (False, True)):
        return c
    return at_most(what, value, measure, slack=tolerance, claim=f"{reason}; one-sided: the band reaches the bound",
                   **kw)


def at_least(what: str, bound: float, measure: Measure, *, claim: str, slack: float = 0.0, **kw: Any) -> Check:
    """The paper's one-sided claim "ours >= bound" (`claim` quotes it); `slack` lowers the bound."""
    return Check(what, bound, slack, measure, kind=Kind.AT_LEAST, reason=claim, **kw)


def at_most(what: str, bound: float, measure: Measure, *, claim: str, slack: float = 0.0, **kw: Any) -> Check:
    """The paper's one-sided claim "ours <= bound" (`claim` quotes it); `slack` raises the bound."""
    return Check(what, bound, slack, measure, kind=Kind.AT_MOST, reason=claim, **kw)


def ordering(what: str, above: str, below: str, measure: Measure, *, claim: str, margin: float = 1.0,
             **kw: Any) -> Check:
    """The paper's "`above` exceeds `below`": `measure` gives above / below, which must reach `margin` (above
    1: a tie, the baseline, fails)."""
    kw.setdefault("baseline", 1.0)
    return Check(what, margin, 0.0, measure, kind=Kind.ORDERING, reason=claim, names=(above, below), **kw)


def ours(what: str, low: float, high: float, measure: Measure, *, reason: str, **kw: Any) -> Check:
    """Our own criterion, where the paper gives no number: ours must lie in [low, high]."""
    return Check(what, low, 0.0, measure, kind=Kind.OURS, reason=reason, upper=high, **kw)


def band_faults(c: Check, quick: bool) -> List[str]:
    """Why the check's band could not fail, or could not tell ours from its baseline (none: it can)."""
    low, high = c.bounds(quick)
    faults = []
    if low <= c.physical[0] and high >= c.physical[1]:
        faults.append(f"[{_num(low)}, {_num(high)}] holds every possible value")
    if low > high:
        faults.append(f"[{_num(low)}, {_num(high)}] holds no value")
    if c.baseline is not None and low <= c.baseline <= high:
        faults.append(f"[{_num(low)}, {_num(high)}] holds the baseline's {_num(c.baseline)}")
    if c.kind is Kind.PAPER and low <= c.physical[0] and c.paper > c.physical[0]:
        faults.append(f"a tolerance reaching the physical bound {_num(c.physical[0])}: a one-sided claim")
    return faults


class LowerBound(float):
    """A measured value known only from below: what did not happen within the run (e.g. flows not
    settled by its end) is reported as the run's length, and passes only a band without upper end."""


@dataclass(frozen=True)
class Outcome:
    check: Check
    ours: Optional[float]  # None when it could not be measured (a run failed or is missing)
    low: float
    high: float
    note: str = ""
    lower_bound: bool = False  # ours is only a lower bound of the value

    @property
    def ok(self) -> bool:
        if self.ours is None or math.isnan(self.ours):
            return False
        return self.low <= self.ours and (self.high == math.inf if self.lower_bound else self.ours <= self.high)

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
        return [_outcome(c, df, out, quick) for c in self.checks if not (quick and c.full_only)]


def _outcome(c: Check, df: pd.DataFrame, out: str, quick: bool) -> Outcome:
    low, high = c.bounds(quick)
    try:
        got = c.measure(df, out)
    except NotRun as e:
        return Outcome(c, None, low, high, f"not run: {e}")
    except Exception as e:  # a run that failed or is missing: report it, never crash the check
        return Outcome(c, None, low, high, f"could not measure: {type(e).__name__}: {e}")
    bound = isinstance(got, LowerBound)
    return Outcome(c, float(got), low, high, "not settled within the run" if bound else "", bound)


def _num(x: float) -> str:
    return f"{x:.4g}"


def ours_text(o: Outcome) -> str:
    if o.ours is None:
        return o.note
    return f"> {_num(o.ours)} (not settled within the run)" if o.lower_bound else _num(o.ours)


def format_checks(outcomes: List[Outcome]) -> str:
    """Claim vs ours, one line per check, and a verdict."""
    if not outcomes:
        return "no checks for this variant"
    rows = [("check", "claim", "accepted", "ours", "")]
    for o in outcomes:
        rows.append((o.check.what, o.check.claim(), f"[{_num(o.low)}, {_num(o.high)}]", ours_text(o),
                     "ok" if o.ok else "not run" if o.not_run else "OUTSIDE"))
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    missing = sum(o.not_run for o in outcomes)
    bad = sum(not o.ok and not o.not_run for o in outcomes)
    verdict = f"{len(outcomes) - bad - missing} of {len(outcomes)} checks within their accepted range"
    return "\n".join(lines + [verdict + ("" if not bad else f"; {bad} outside")
                               + ("" if not missing else f"; {missing} not run")])
