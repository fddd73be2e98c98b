"""Named protocol setups: each protocol as a paper runs it, as the spec tables that say so
(transport, queue, routing, net, switch). Comparing protocols is then one axis of names:

    setup = "sird-paper"                                   # in a spec
    [axes]
    setup = ["dctcp-sird-paper", "sird-paper"]             # in a sweep

A spec naming a setup starts from its tables; tables and keys the spec gives itself are merged over
them, key by key (`setup = "ndp-paper"` with `[transport] initial_window_packets = 15` changes only
the window). The resolved spec holds the expanded tables. The reproductions use these setups, so a
fix to how a paper is set up lands everywhere at once.

The setups are data of the core (crates/dcnsim-core/data/setups/<name>.toml, each with a comment on
its source), which expands them when it reads a spec; this module reads them from there.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Dict, List, Tuple

from . import _core
from .errors import SpecError

#: The tables a setup may give.
SETUP_KEYS = ("transport", "queue", "routing", "net", "switch")


@dataclass(frozen=True)
class Setup:
    name: str
    summary: str
    tables: Dict[str, dict]
    #: The dotted keys it sets (`queue.fabric.ecn`).
    keys: Tuple[str, ...] = ()


def _shipped() -> Dict[str, Setup]:
    described = json.loads(_core.describe())["setups"]
    return {s["name"]: Setup(s["name"], s["summary"], s["tables"], tuple(s["keys"])) for s in described}


SETUPS: Dict[str, Setup] = _shipped()


def names() -> List[str]:
    return list(SETUPS)


def get(name, field: str = "setup") -> Setup:
    """The setup called `name`; a SpecError at `field` naming the known ones otherwise."""
    if not isinstance(name, str):
        raise SpecError(field, f"expected a setup name (a string), got {type(name).__name__} {name!r}")
    if name not in SETUPS:
        raise SpecError(field, f"unknown setup \"{name}\"; known: {', '.join(SETUPS)}")
    return SETUPS[name]


def tables(name: str) -> Dict[str, dict]:
    """A fresh copy of the setup's tables (callers may edit it)."""
    return copy.deepcopy(get(name).tables)


def _pick(name: str, table: str, *keys: str) -> dict:
    t = get(name).tables[table]
    return {k: t[k] for k in keys}


# Values the reproductions build their own specs from, taken from the setups that define them.
# The SIRD paper's BDP (100 KB) and framing (1538 B frames): see data/setups/sird-paper.toml.
SIRD_PAPER_BDP: int = get("sird-paper").tables["transport"]["bdp_bytes"]
SIRD_PAPER_NET = dict(get("sird-paper").tables["net"])
# ExpressPass's evaluation framing: see data/setups/expresspass-paper.toml.
XPASS_PAPER_NET = dict(get("expresspass-paper").tables["net"])
# The NDP paper's framing (9 KB jumbo frames): see data/setups/ndp-paper.toml.
NDP_PAPER_NET = dict(get("ndp-paper").tables["net"])
# ns-2's FullTcp connection set-up, timer and FCT end, and its DCTCP agent's alpha and window floor:
# see data/setups/dctcp-xpass-paper.toml.
NS2_FULLTCP_SETUP = _pick("dctcp-xpass-paper", "transport", "connection_setup", "initial_rto_us", "fct_end")
NS2_DCTCP = _pick("dctcp-xpass-paper", "transport", "initial_alpha", "window_floor")
# The HPCC reference NIC has no retransmission timer: see data/setups/hpcc-paper.toml.
RDMA_LOSSLESS_TIMEOUTS = _pick("hpcc-paper", "transport", "timeout_us", "short_timeout_us")
