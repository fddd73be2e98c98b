"""Named reproductions: a sweep plus the table and plot it produces, with the paper's numbers
beside ours. Adding one is adding a module with a `REPRO = Repro(...)` and listing it below."""

from __future__ import annotations

from typing import List

from . import (
    dctcp_k,
    ndp_fig4,
    ndp_fig14,
    ndp_fig15,
    ndp_fig16,
    ndp_fig17,
    ndp_fig19,
    ndp_fig20,
    ndp_fig21,
    ndp_fig22,
    ndp_prio,
    rdma_pfc,
    sird_fig7,
    sird_fig9,
    sird_fig10,
    sird_table5,
)
from .base import Check, Outcome, Repro, format_checks

REGISTRY: List[Repro] = [m.REPRO for m in (dctcp_k, ndp_fig4, ndp_fig14, ndp_fig15, ndp_fig16, ndp_fig17, ndp_fig19,
                                           ndp_fig20, ndp_fig21, ndp_fig22, ndp_prio, sird_table5, sird_fig7, sird_fig9,
                                           sird_fig10, rdma_pfc)]


__all__ = ["REGISTRY", "get", "Repro", "Check", "Outcome", "format_checks"]


def get(name: str) -> Repro:
    for r in REGISTRY:
        if r.name == name:
            return r
    raise KeyError(f"unknown reproduction {name!r}; known: {', '.join(r.name for r in REGISTRY)}")
