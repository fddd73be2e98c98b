"""Named reproductions: a sweep plus the table and plot it produces, with the paper's numbers
beside ours. Adding one is adding a module of this package with a `REPRO = Repro(...)`: every
module that defines one is registered, in name order (numbers in names compare as numbers)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import List

from .base import Check, NotRun, Outcome, Repro, format_checks


def _natural(name: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _discover() -> List[Repro]:
    # `report` is the docs generator (`python -m dcnsim.repro.report`), not an entry.
    names = sorted((m.name for m in pkgutil.iter_modules(__path__) if m.name != "report"), key=_natural)
    modules = [importlib.import_module(f"{__name__}.{n}") for n in names]
    return [m.REPRO for m in modules if hasattr(m, "REPRO")]


REGISTRY: List[Repro] = _discover()
assert len({r.name for r in REGISTRY}) == len(REGISTRY), "two reproductions share a name"

__all__ = ["REGISTRY", "get", "Repro", "Check", "NotRun", "Outcome", "format_checks"]


def get(name: str) -> Repro:
    for r in REGISTRY:
        if r.name == name:
            return r
    raise KeyError(f"unknown reproduction {name!r}; known: {', '.join(r.name for r in REGISTRY)}")
