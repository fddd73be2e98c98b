"""Sweep definitions: a base spec plus axes expanded as a product, with an optional filter."""

from __future__ import annotations

import ast
import copy
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..errors import SpecError
from ..spec import as_spec, load_spec, set_path, tomllib

MAX_RUNS = 100_000  # a typo in an axis should not schedule a million runs


@dataclass
class SweepSpec:
    """A base spec, axes (dotted parameter name -> values) and an optional filter expression.

    An axis named "a,b" is zipped: each of its values is a list giving a and b together (to switch
    a whole setup, e.g. protocol, queues and routing, as one axis)."""

    base: dict
    axes: Dict[str, List[Any]] = field(default_factory=dict)
    filter: Optional[str] = None
    name: str = "sweep"

    def runs(self) -> List[tuple]:
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
            out.append((values, spec))
        return out

    def to_dict(self) -> dict:
        return {"name": self.name, "base": self.base, "axes": self.axes, "filter": self.filter}


def load_sweep(path) -> SweepSpec:
    """Reads a sweep TOML: `name`, `base = "run.toml"` or an inline `[base]` table, `[axes]`, `filter`."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text())
    except OSError as e:
        raise FileNotFoundError(f"cannot read sweep {p}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(p), f"not valid TOML: {e}") from None
    unknown = set(doc) - {"name", "base", "axes", "filter"}
    if unknown:
        raise SpecError(sorted(unknown)[0], "unknown key in a sweep file (known: name, base, axes, filter)")
    base = doc.get("base")
    if isinstance(base, str):
        base = load_spec(base if os.path.isabs(base) else p.parent / base)
    elif isinstance(base, dict):
        from ..spec import _resolve_paths

        base = _resolve_paths(base, p.parent.resolve())
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
    return SweepSpec(base=base, axes=axes, filter=flt, name=doc.get("name", p.stem))


def as_sweep(base, axes=None, filter=None, name="sweep") -> SweepSpec:
    if isinstance(base, SweepSpec):
        return base
    return SweepSpec(base=as_spec(base), axes=dict(axes or {}), filter=filter, name=name)


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
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        base = _dotted(node.value)
        return base and f"{base}[{node.slice.value}]"
    return None


def compile_filter(expr: str):
    """A safe evaluator for filters such as `workload[0].load <= 0.8 or transport.protocol == 'ndp'`."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise SpecError("filter", f"not a valid expression: {e.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise SpecError("filter", f"`{type(node).__name__}` is not allowed in a filter")

    def ev(node, values):
        if isinstance(node, ast.Expression):
            return ev(node.body, values)
        name = _dotted(node)
        if name is not None and not isinstance(node, ast.Constant):
            if name not in values:
                raise SpecError("filter", f"`{name}` is not an axis (axes: {', '.join(values)})")
            return values[name]
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [ev(e, values) for e in node.elts]
        if isinstance(node, ast.BoolOp):
            vals = (ev(v, values) for v in node.values)
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand, values)
            return (not v) if isinstance(node.op, ast.Not) else -v
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left, values), ev(node.right, values)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b}
            return ops[type(node.op)]()
        if isinstance(node, ast.Compare):
            left = ev(node.left, values)
            for op, right_node in zip(node.ops, node.comparators):
                right = ev(right_node, values)
                ok = {ast.Eq: lambda: left == right, ast.NotEq: lambda: left != right, ast.Lt: lambda: left < right,
                      ast.LtE: lambda: left <= right, ast.Gt: lambda: left > right, ast.GtE: lambda: left >= right,
                      ast.In: lambda: left in right, ast.NotIn: lambda: left not in right}[type(op)]()
                if not ok:
                    return False
                left = right
            return True
        raise SpecError("filter", f"cannot evaluate `{ast.dump(node)}`")

    return lambda values: bool(ev(tree, values))
