"""Sweep definitions: a base spec plus axes expanded as a product, with an optional filter."""

from __future__ import annotations

import ast
import copy
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..errors import SpecError
from ..spec import as_spec, check_text, load_spec, plain, read_toml, resolve_paths, set_path

MAX_RUNS = 100_000  # a typo in an axis should not schedule a million runs
MAX_FILTER_ITEMS = 10_000  # longest string or list a filter may build (`'a' * 10**12` must not eat the memory)


@dataclass
class SweepSpec:
    """A base spec, axes (dotted parameter name -> values) and an optional filter expression.

    An axis named "a,b" is zipped: each of its values is a list giving a and b together. To compare
    protocols, prefer the `setup` axis (`{"setup": ["dctcp-sird-paper", "sird-paper"]}`, see
    dcnsim.setups). Relative file paths in the base and the axes resolve against `base_dir` (the
    sweep file's folder; by default the working directory when the sweep is defined)."""

    base: dict
    axes: Dict[str, List[Any]] = field(default_factory=dict)
    filter: Optional[str] = None
    name: str = "sweep"
    base_dir: Optional[str] = None
    #: Store each run's flow table (flows.parquet). False: summary, queues and switches only (a
    #: 24 ms run of the SIRD paper's WKa holds 13 M flows: about 200 MB on disk and 1 GB in memory).
    flow_tables: bool = True

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise SpecError("name", f"a sweep's name is a string, got {self.name!r:.60}")
        check_text(self.name, "name")
        if not isinstance(self.flow_tables, bool):
            raise SpecError("flow_tables", f"expected true or false, got {self.flow_tables!r:.60}")
        self.base = plain(self.base)
        if not isinstance(self.axes, dict):
            raise SpecError("axes", f"expected a table of dotted parameter names to lists, got {self.axes!r:.60}")
        self.axes = {k: plain(v, f"axes.{k}") for k, v in self.axes.items()}
        if self.base_dir is None:
            self.base_dir = os.getcwd()

    def runs(self) -> List[Tuple[Dict[str, Any], Dict[str, Any]]]:
        """The expanded runs: (axis values dict, full spec dict), in axis order."""
        for k, v in self.axes.items():
            if not isinstance(v, list) or not v:
                raise SpecError(f"axes.{k}", "an axis needs a non-empty list of values")
        names = list(self.axes)
        total = 1
        for n in names:
            total *= len(self.axes[n])
        if total > MAX_RUNS:
            raise SpecError("axes", f"{total} runs exceeds the limit of {MAX_RUNS}")
        check = compile_filter(self.filter) if self.filter else None
        out = []
        for combo in itertools.product(*(self.axes[n] for n in names)):
            values = dict(zip(names, combo))
            if check and not check(values):
                continue
            spec = copy.deepcopy(self.base)
            for n, v in values.items():
                if "," in n:
                    keys = [k.strip() for k in n.split(",")]
                    if not isinstance(v, list) or len(v) != len(keys):
                        raise SpecError(f"axes.{n}", f"each value of a zipped axis is a list of {len(keys)} values")
                    for k, x in zip(keys, v):
                        set_path(spec, k, copy.deepcopy(x))
                else:
                    set_path(spec, n, copy.deepcopy(v))
            assert self.base_dir is not None  # set by __post_init__
            out.append((values, resolve_paths(spec, Path(self.base_dir))))
        return out

    def to_dict(self) -> dict:
        return {"name": self.name, "base": self.base, "axes": self.axes, "filter": self.filter,
                "flow_tables": self.flow_tables}


def load_sweep(path) -> SweepSpec:
    """Reads a sweep TOML: `name`, `base = "run.toml"` or an inline `[base]` table, `[axes]`, `filter`,
    `flow_tables` (default true)."""
    p = Path(path)
    doc = read_toml(p, "sweep")
    unknown = set(doc) - {"name", "base", "axes", "filter", "flow_tables"}
    if unknown:
        known = "name, base, axes, filter, flow_tables"
        raise SpecError(sorted(unknown)[0], f"unknown key in a sweep file (known: {known})")
    base = doc.get("base")
    if isinstance(base, str):
        base = load_spec(base if os.path.isabs(base) else p.parent / base)
    elif isinstance(base, dict):
        base = resolve_paths(base, p.parent.resolve())
    else:
        raise SpecError("base", "a sweep needs base = \"run.toml\" or an inline [base] table")
    axes = doc.get("axes", {})
    if not isinstance(axes, dict):
        raise SpecError("axes", "expected a table of dotted parameter names to lists of values")
    flt = doc.get("filter")
    if flt is not None and not isinstance(flt, str):
        raise SpecError("filter", "expected a string expression")
    if flt:
        compile_filter(flt)  # fail early on a bad expression
    name = doc.get("name", p.stem)
    if not isinstance(name, str):
        raise SpecError("name", f"expected a string, got {name!r:.60}")
    return SweepSpec(base=base, axes=axes, filter=flt, name=name, base_dir=str(p.parent.resolve()),
                     flow_tables=doc.get("flow_tables", True))


def as_sweep(base, axes=None, filter=None, name="sweep", flow_tables: bool = True) -> SweepSpec:
    if isinstance(base, SweepSpec):
        return base
    return SweepSpec(base=as_spec(base), axes=dict(axes or {}), filter=filter, name=name, flow_tables=flow_tables)


_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.Compare, ast.Eq,
            ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Constant, ast.Name, ast.Load,
            ast.Attribute, ast.Subscript, ast.List, ast.Tuple, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div)


def _dotted(node) -> Optional[str]:
    """The dotted axis name an expression node spells (`workload[0].load` parses as attribute/subscript)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return base and f"{base}.{node.attr}"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        base = _dotted(node.value)
        return base and f"{base}[{node.slice.value}]"
    return None


def compile_filter(expr: str):
    """A safe evaluator for filters such as `workload[0].load <= 0.8 or transport.protocol == 'ndp'`.
    Any failure to evaluate (an unknown axis, 1 / 0, comparing a string with a number, a string or
    list grown past MAX_FILTER_ITEMS) is a SpecError at `filter` naming the run's axis values."""
    if not isinstance(expr, str):
        raise SpecError("filter", f"expected a string expression, got {expr!r:.60}")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise SpecError("filter", f"not a valid expression: {e.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise SpecError("filter", f"`{type(node).__name__}` is not allowed in a filter")

    def check(values):
        try:
            return bool(_eval(tree, values))
        except SpecError:
            raise
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, RecursionError) as e:
            shown = ", ".join(f"{k} = {v!r}" for k, v in values.items())
            raise SpecError("filter", f"cannot evaluate `{expr}` for the run {shown}: {e}") from None

    return check


def _sized(x):
    """Refuses sequences larger than MAX_FILTER_ITEMS (before they are built, where possible)."""
    if isinstance(x, (str, list, tuple)) and len(x) > MAX_FILTER_ITEMS:
        raise SpecError("filter", f"builds a value of {len(x):,} items (the limit is {MAX_FILTER_ITEMS:,})")
    return x


def _times(a, b):
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and not isinstance(n, bool):
            if len(seq) * max(n, 0) > MAX_FILTER_ITEMS:
                raise SpecError("filter", f"repeats a value of {len(seq)} items {n:,} times "
                                          f"(the limit is {MAX_FILTER_ITEMS:,} items)")
    return _sized(a * b)


_BINOPS = {ast.Add: lambda a, b: _sized(a + b), ast.Sub: lambda a, b: a - b, ast.Mult: _times,
           ast.Div: lambda a, b: a / b}
_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _eval(node, values):
    if isinstance(node, ast.Expression):
        return _eval(node.body, values)
    name = _dotted(node)
    if name is not None and not isinstance(node, ast.Constant):
        if name not in values:
            raise SpecError("filter", f"`{name}` is not an axis (axes: {', '.join(values)})")
        return values[name]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, values) for e in node.elts]
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, values) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, values)
        return (not v) if isinstance(node.op, ast.Not) else -v
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, values)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise SpecError("filter", f"cannot evaluate `{ast.unparse(node)}` (only axis names, literals, arithmetic, "
                              "comparisons, and/or/not)")
