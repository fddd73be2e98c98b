"""RDMA fabric sanity check (issue 12's `rdma-pfc`): an incast over a lossless (PFC) shared-buffer
fabric. Without congestion control (NewReno without ECN: only the pauses slow the senders) the
incast is lossless, the pauses propagate from the receiver's ToR through the spine to the senders'
NICs, and a victim flow to another receiver, sharing only the paused spine link, is slowed (PFC's
head-of-line blocking). With DCQCN (RED marking at dequeue) the rates come down before the buffer
fills and the pauses mostly vanish; without PFC the same incast drops instead of pausing.

Fabric: two racks of 8 hosts at 25 Gb/s, one 100 Gb/s spine, 2 MB shared buffers per switch, 1 us
links. Six hosts of rack 0 send 2 MB each to host 8 (rack 1); host 6 sends 2 MB to host 15 (rack 1)
starting 20 us later: the victim."""

from ..sweep.spec import SweepSpec
from .base import SLOWDOWN, Repro, at_most, ours
from .common import done, table

SETUPS = {
    "no CC, PFC": {"transport": {"protocol": "newreno"}, "switch": {"buffer_bytes": 2_000_000, "pfc": True},
                   "queue": {}},
    "DCQCN, PFC": {"transport": {"protocol": "dcqcn"}, "switch": {"buffer_bytes": 2_000_000, "pfc": True},
                   "queue": {"ecn": "red", "ecn_at": "dequeue", "red_min_bytes": 40000, "red_max_bytes": 160000,
                             "red_pmax": 0.2}},
    "no CC, no PFC": {"transport": {"protocol": "newreno"}, "switch": {"buffer_bytes": 2_000_000}, "queue": {}},
}
VICTIM = 6  # flow index of the victim in the flow list


def _flows() -> list:
    rows = [[h, 8, 2_000_000, 0.0] for h in range(6)] + [[6, 15, 2_000_000, 20.0]]
    return [{"kind": "flow_list", "flows": rows}]


def build(quick: bool) -> SweepSpec:
    base = {
        "seed": 1, "duration_us": 20000.0,
        "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 8, "spines": 1, "host_rate_gbps": 25.0,
                     "core_rate_gbps": 100.0, "host_delay_us": 1.0, "core_delay_us": 1.0},
        "workload": _flows(),
    }
    setups = [[s["transport"], s["switch"], s["queue"]] for s in SETUPS.values()]
    return SweepSpec(base=base, axes={"transport,switch,queue": setups}, name="rdma-pfc")


def _label(transport: dict, switch: dict) -> str:
    for label, s in SETUPS.items():
        if s["transport"] == transport and s["switch"] == switch:
            return label
    return transport.get("protocol", "?")


def _run(df, label: str):
    d = done(df)
    keep = [_label(v[0], v[1]) == label for v in d["transport,switch,queue"]]
    if not any(keep):
        raise LookupError(f"no finished run for {label}")
    return d[keep].iloc[0]


def _summary(df, out, label):
    from ..sweep import load_summary

    return load_summary(out, _run(df, label)["key"])


def _victim_slowdown(df, out, label) -> float:
    from ..sweep import load_flows

    return float(load_flows(out, _run(df, label)["key"]).sort_values("flow_id")["slowdown"].iloc[VICTIM])


CHECKS = [
    # Lossless: no drops at all with PFC and no congestion control.
    at_most("drops, no CC with PFC", 0, lambda df, out: _summary(df, out, "no CC, PFC")["queues"]["drops"],
            claim="PFC makes the fabric lossless (its purpose, the HPCC and DCQCN papers' premise)"),
    # Pause propagation: every sender's NIC was paused, the victim's too (its ToR's buffer fills
    # behind the paused spine link).
    ours("senders' NICs paused (6 incast + the victim), no CC with PFC", 7, 7,
         lambda df, out: _summary(df, out, "no CC, PFC")["pfc"]["host_nics_paused"],
         reason="ours: pauses spread back to every sender of this fabric, the victim's too (qualitative)"),
    # Head-of-line blocking: the victim runs well over its ideal under PFC (no paper number: a bound).
    ours("victim slowdown, no CC with PFC (HOL blocking: well above 1)", 1.2, 4.8,
         lambda df, out: _victim_slowdown(df, out, "no CC, PFC"), physical=SLOWDOWN, baseline=1.0,
         reason="ours: head-of-line blocking slows the victim (no number): 20% over its ideal at least"),
    # DCQCN: pause frames a small fraction of the no-CC run's.
    ours("pause frames, DCQCN / no CC", 0.0, 0.25,
         lambda df, out: _summary(df, out, "DCQCN, PFC")["pfc"]["pause_frames_sent"]
         / max(1, _summary(df, out, "no CC, PFC")["pfc"]["pause_frames_sent"]), baseline=1.0,
         reason="ours: DCQCN removes most pauses (no number): a quarter of the no-CC run's at most"),
]


def report(df, out: str) -> str:
    rows = []
    for label in SETUPS:
        try:
            s = _summary(df, out, label)
        except LookupError:
            rows.append((label, "-", "-", "-", "-", "-"))
            continue
        pfc = s.get("pfc") or {}
        rows.append((label, s["queues"]["drops"], pfc.get("pause_frames_sent", "-"), pfc.get("host_nics_paused", "-"),
                     f"{_victim_slowdown(df, out, label):.2f}", s["flows"]["unfinished"]))
    return ("RDMA PFC sanity check: 6 x 2 MB incast across a 100 Gb/s spine, plus a victim flow to another receiver\n"
            + table(rows, ["setup", "drops", "pause frames", "NICs paused", "victim slowdown", "unfinished"]))


REPRO = Repro("rdma-pfc", "PFC incast: lossless, pause propagation, HOL victim; DCQCN removes most pauses",
              "HPCC SIGCOMM'19 / DCQCN SIGCOMM'15 (qualitative)", build, report, CHECKS)
