"""Named protocol setups: each protocol as a paper runs it, as the spec tables that say so
(transport, queue, routing, net). Comparing protocols is then one axis of names:

    setup = "sird-paper"                                   # in a spec
    [axes]
    setup = ["dctcp-sird-paper", "sird-paper"]             # in a sweep

A spec naming a setup starts from its tables; tables and keys the spec gives itself are merged over
them, key by key (`setup = "ndp-paper"` with `[transport] initial_window_packets = 15` changes only
the window). The resolved spec holds the expanded tables. The reproductions use these setups, so a
fix to how a paper is set up lands everywhere at once.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Dict, List

from .errors import SpecError

#: The tables a setup may give.
SETUP_KEYS = ("transport", "queue", "routing", "net", "switch")

# The SIRD paper's BDP (Table 2 rounds 91.5 KB at 100 Gb/s and 7.3 us to 100 KB) and framing: 1458 B
# of payload in 1538 B on the wire (headers, preamble and gap), 84 B minimum frames for control.
SIRD_PAPER_BDP = 100_000
SIRD_PAPER_NET = {"mtu_bytes": 1538, "header_bytes": 80, "control_bytes": 84}
# The NDP paper's framing: 9 KB jumbo frames with 64 B headers, 64 B control packets.
NDP_PAPER_NET = {"mtu_bytes": 9000, "header_bytes": 64, "control_bytes": 64}


@dataclass(frozen=True)
class Setup:
    name: str
    summary: str
    tables: Dict[str, dict]


_SETUPS = [
    Setup("ndp-paper", "NDP as the NDP paper (SIGCOMM'17) simulates it: 9 KB packets, 8-packet trimming queues "
          "with a header queue served WRR 10:1, source-routed per-packet spraying, initial window 30 packets", {
              "transport": {"protocol": "ndp", "initial_window_packets": 30},
              "queue": {"priorities": 2, "limit_packets": 8, "trim": True, "scheduling": "wrr", "wrr_weights": [10, 1]},
              "routing": {"load_balancing": "source"},
              "net": dict(NDP_PAPER_NET),
          }),
    Setup("dctcp-ndp-paper", "DCTCP as the NDP paper runs it: 9 KB packets, 200-packet queues, ECN marking at "
          "K = 30 packets, per-flow ECMP, initial window 10 packets", {
              "transport": {"protocol": "dctcp", "initial_window_packets": 10},
              "queue": {"limit_packets": 200, "ecn": "step", "ecn_k_packets": 30},
              "routing": {"load_balancing": "ecmp"},
              "net": {"mtu_bytes": 9000, "header_bytes": 64},
          }),
    # Section 6.1 on Fig. 16: "DCTCP uses ECN to get early feedback, as well as large shared buffer
    # switches to absorb initial bursts". The paper gives no buffer size: 9 MB per switch is a 10 Gb/s
    # shared-buffer switch of its time (Broadcom Trident+ class), handed out by dynamic thresholds
    # with alpha = 1 (a lone congested port may take half the free buffer). K = 30 packets as in the
    # paper; IW 10 and the 200 us RTO floor are not from the paper (DCTCP's defaults here).
    Setup("dctcp-shared-ndp-paper", "DCTCP on large shared-buffer switches, as the NDP paper runs its incasts "
          "(Fig. 16): 9 KB packets, 9 MB per switch with dynamic thresholds (alpha = 1), ECN marking at K = 30 "
          "packets, per-flow ECMP, initial window 10 packets", {
              "transport": {"protocol": "dctcp", "initial_window_packets": 10},
              "queue": {"ecn": "step", "ecn_k_packets": 30},
              "switch": {"buffer_bytes": 9_000_000, "buffer_alpha_shift": 0},
              "routing": {"load_balancing": "ecmp"},
              "net": {"mtu_bytes": 9000, "header_bytes": 64},
          }),
    Setup("phost-ndp-paper", "pHost as the NDP paper's baseline: 9 KB packets, 8-packet drop-tail queues with two "
          "priority classes, per-packet spraying, no trimming", {
              "transport": {"protocol": "phost"},
              "queue": {"priorities": 2, "limit_packets": 8},
              "routing": {"load_balancing": "spray"},
              "net": dict(NDP_PAPER_NET),
          }),
    Setup("sird-paper", "SIRD with the SIRD paper's Table 2 (NSDI'25): B = 1.5, UnschT = 1, SThr = 0.5 BDP of "
          "100 KB; ECN at NThr = 1.25 BDP on fabric links only; two priority classes; per-packet spraying; "
          "1538 B frames", {
              "transport": {"protocol": "sird", "bdp_bytes": SIRD_PAPER_BDP},
              "queue": {"priorities": 2, "fabric": {"ecn": "step", "ecn_k_bytes": int(1.25 * SIRD_PAPER_BDP)}},
              "routing": {"load_balancing": "spray"},
              "net": dict(SIRD_PAPER_NET),
          }),
    Setup("dctcp-sird-paper", "DCTCP as the SIRD paper runs it (Table 2): initial window 1 BDP (66 packets), "
          "g = 0.08, ECN step marking at 1.25 BDP on every switch port, per-flow ECMP, 200 us minimum RTO, "
          "1538 B frames", {
              "transport": {"protocol": "dctcp", "g": 0.08, "initial_window_packets": 66, "min_rto_us": 200.0},
              "queue": {"ecn": "step", "ecn_k_bytes": int(1.25 * SIRD_PAPER_BDP)},
              "routing": {"load_balancing": "ecmp"},
              "net": dict(SIRD_PAPER_NET),
          }),
]

SETUPS: Dict[str, Setup] = {s.name: s for s in _SETUPS}


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


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def expand(spec: dict) -> dict:
    """The spec with its `setup` (if any) replaced by the setup's tables, the spec's own merged over them."""
    if "setup" not in spec:
        return spec
    spec = dict(spec)
    setup = get(spec.pop("setup"))
    own = spec.get("transport")
    mine = setup.tables["transport"]["protocol"]
    if isinstance(own, dict) and own.get("protocol", mine) != mine:
        raise SpecError("transport.protocol", f"\"{own['protocol']}\" contradicts setup \"{setup.name}\" "
                                              f"(protocol {mine}): drop one of them")
    for key, table in setup.tables.items():
        own = spec.get(key)
        if own is None:
            spec[key] = copy.deepcopy(table)
        elif isinstance(own, dict):
            spec[key] = _merge(copy.deepcopy(table), own)
        # Anything else is left for the core to reject, naming the field.
    return spec
