"""Dart at scale (issue 13's `dart-scale`; the paper's section VI-A/B: Figures 11-14): a 4:1
oversubscribed Clos with ECMP and shallow buffers (ECN at 22.5 KB); background flows from every
host to random receivers and foreground incasts of degree 16 of 2, 4 and 8 KB messages; the 99th
percentile and median completion time of the 8 KB messages, and the delivered load, for Dart, DCQCN,
TIMELY and DCTCP (and, in the full variant, the ablations of Figure 14). The headline: Dart's p99
for short flows several times lower than DCQCN's and TIMELY's before saturation (the paper: 4.8x on
average over 20 % and 40 % load, typical mix).

Set-up (the paper's numbers where the text keeps them, ours where it lost them; docs/protocols/
dart.md lists each): 1024 hosts (32 racks of 32, 8 spines: 4:1) in the full variant, 32 (4 racks
of 8, 2 spines: 4:1) in the quick one; 10 Gb/s hosts and links, 1 us per link (lost); 300 KB per
port queues (the buffer size is lost); ECN step marking at 22.5 KB for every ECN scheme; ACKs in a
strict high-priority class for every scheme (the paper's "high-priority queues only for ACKs");
background flows Poisson with the Benson IMC'10 size distribution (`imc10`, the paper's ref. [14]);
foreground incasts of 16 senders to a random receiver, a third of the foreground load each for
2000, 4000 and 8000 B. Mixes: typical 40 % short / 60 % long (the paper's), light 20/80 and heavy
60/40 (ours: the paper's splits are lost; full variant only). DCTCP runs without the paper's per-
transfer OS overhead (not modelled), so it is better here than in the paper. Dart: defaults and
`[switch] iofd = true`. The fabric is lossless (PFC, 1 MB shared buffers) and RDMA timeouts are 1 ms.

Our quick numbers (docs/protocols/dart.md): the 8 KB p99 of Dart and DCQCN are equal at 20 % and
Dart's is worse at 40 % (past this fabric's core saturation): the p99 check (4.8x) fails, the
median check (1.4x) passes at 1.0x."""

from ..sweep.spec import SweepSpec
from .base import Check, Repro
from .common import done, table

SHORT_SIZES = (2000, 4000, 8000)
MIXES = {"typical": 0.4, "light": 0.2, "heavy": 0.6}
ECN = {"ecn": "step", "ecn_k_bytes": 22500}
ACKS_FIRST = {"data_priority": 1, "control_priority": 0}
# A lossless fabric (RDMA's PFC): timeouts only for losses that cannot happen; 1 ms so that queueing
# behind an incast (128 KB at 10 Gb/s: 100 us) never fires one spuriously.
RDMA_TIMEOUTS = {"timeout_us": 1000.0, "short_timeout_us": 1000.0}
LOSSLESS = {"buffer_bytes": 1_000_000, "pfc": True}

# name -> (transport, queue additions, switch)
SETUPS = {
    "dart": ({"protocol": "dart", **ACKS_FIRST, **RDMA_TIMEOUTS}, ECN, {"iofd": True}),
    "dcqcn": ({"protocol": "dcqcn", **ACKS_FIRST, **RDMA_TIMEOUTS}, ECN, {}),
    "timely": ({"protocol": "timely", **ACKS_FIRST, **RDMA_TIMEOUTS}, {}, {}),
    "dctcp": ({"protocol": "dctcp", **ACKS_FIRST}, ECN, {}),
    # Figure 14's ablations (full variant).
    "dasr-only": ({"protocol": "dart", **ACKS_FIRST, **RDMA_TIMEOUTS}, ECN, {}),
    "dasr-no-lookahead": ({"protocol": "dart", "lookahead": False, **ACKS_FIRST, **RDMA_TIMEOUTS}, ECN, {}),
    "iofd-only": ({"protocol": "dart", "dasr": False, **ACKS_FIRST, **RDMA_TIMEOUTS}, ECN, {"iofd": True}),
    "pri-q": ({"protocol": "dart", "dasr": False, "data_priority": 2, "control_priority": 0,
               "short_flow_priority": 1, **RDMA_TIMEOUTS}, {**ECN, "priorities": 3}, {}),
}
QUICK_SETUPS = ("dart", "dcqcn", "timely", "dctcp")


def _topology(quick: bool) -> dict:
    racks, per_rack, spines = (4, 8, 2) if quick else (32, 32, 8)
    return {"kind": "leaf_spine", "racks": racks, "hosts_per_rack": per_rack, "spines": spines,
            "host_rate_gbps": 10.0, "core_rate_gbps": 10.0, "host_delay_us": 1.0, "core_delay_us": 1.0}


def _workload(load: float, short: float) -> list:
    w = [{"kind": "poisson", "name": "background", "load": round(load * (1 - short), 6), "cdf": "imc10"}]
    for size in SHORT_SIZES:
        w.append({"kind": "incast", "name": f"incast_{size // 1000}k", "senders": 16, "size_bytes": size,
                  "load": round(load * short / len(SHORT_SIZES), 6)})
    return w


def build(quick: bool) -> SweepSpec:
    duration, warmup = (5000.0, 500.0) if quick else (20000.0, 2000.0)
    base = {"seed": 1, "duration_us": duration, "measure": {"warmup_us": warmup}, "topology": _topology(quick)}
    loads = [0.2, 0.4] if quick else [0.2, 0.4, 0.6, 0.8]
    mixes = ["typical"] if quick else list(MIXES)
    names = QUICK_SETUPS if quick else tuple(SETUPS)
    setups = [[name, SETUPS[name][0], {"priorities": 2, **SETUPS[name][1]}, {**LOSSLESS, **SETUPS[name][2]}]
              for name in names]
    workloads = [_workload(load, MIXES[mix]) for mix in mixes for load in loads]
    return SweepSpec(base=base, axes={"name,transport,queue,switch": setups, "workload": workloads},
                     name="dart-scale")


def _mix_load(workload: list):
    """(mix name, total load) of a workload axis value."""
    total = sum(c["load"] for c in workload)
    short = sum(c["load"] for c in workload if c["kind"] == "incast") / total
    mix = min(MIXES, key=lambda m: abs(MIXES[m] - short))
    return mix, round(total, 3)


def _run(df, setup: str, mix: str, load: float):
    d = done(df)
    keep = [(v[0] == setup) and _mix_load(w) == (mix, round(load, 3))
            for v, w in zip(d["name,transport,queue,switch"], d["workload"])]
    if not any(keep):
        raise LookupError(f"no finished run for {setup}, {mix} mix, load {load}")
    return d[keep].iloc[0]["key"]


def fct_8k_us(df, out, setup: str, mix: str, load: float, q: float) -> float:
    """Quantile q of the completion times of the 8 KB incast messages (finished, in the window)."""
    from ..sweep import load_flows

    f = load_flows(out, _run(df, setup, mix, load))
    f = f[(f["workload"] == "incast_8k") & f["counted"] & f["fct_us"].notna()]
    if f.empty:
        raise LookupError(f"no finished 8 KB message for {setup} at {load}")
    return float(f["fct_us"].quantile(q))


def delivered_load(df, out, setup: str, mix: str, load: float) -> float:
    """Goodput in the window over the hosts' capacity (the paper's throughput, as a load)."""
    from ..sweep import load_summary

    return float(load_summary(out, _run(df, setup, mix, load))["goodput_normalized"])


def _mean_ratio(df, out, q: float, baselines=("dcqcn", "timely"), loads=(0.2, 0.4)) -> float:
    ratios = [fct_8k_us(df, out, b, "typical", load, q) / fct_8k_us(df, out, "dart", "typical", load, q)
              for b in baselines for load in loads]
    return sum(ratios) / len(ratios)


CHECKS = [
    # Figure 11(a): Dart's mean reduction of the 8 KB p99 vs DCQCN and TIMELY at 20 % and 40 %: 4.8x.
    Check("p99 8 KB FCT, DCQCN and TIMELY / Dart, typical mix, mean over 20 and 40 % load", 4.8, 0.75,
          lambda df, out: _mean_ratio(df, out, 0.99), relative=True),
    # Figure 12(a): the median, 1.4x on average (over every load in the paper; here 20 and 40 %).
    Check("median 8 KB FCT, DCQCN and TIMELY / Dart, typical mix, mean over 20 and 40 % load", 1.4, 0.5,
          lambda df, out: _mean_ratio(df, out, 0.5), relative=True),
]


def report(df, out: str) -> str:
    rows = []
    d = done(df)
    combos = sorted({_mix_load(w) for w in d["workload"]}, key=lambda x: (list(MIXES).index(x[0]), x[1]))
    for mix, load in combos:
        for s in SETUPS:
            try:
                p99 = fct_8k_us(df, out, s, mix, load, 0.99)
                p50 = fct_8k_us(df, out, s, mix, load, 0.5)
            except LookupError:
                continue
            try:
                thr = f"{delivered_load(df, out, s, mix, load):.3f}"
            except (LookupError, KeyError):
                thr = "-"
            rows.append((mix, f"{load:.0%}", s, f"{p99:.1f}", f"{p50:.1f}", thr))
    return ("Dart at scale: completion times of the 8 KB incast messages (us) and delivered load\n"
            + table(rows, ["mix", "load", "scheme", "p99 8 KB", "median 8 KB", "delivered"]))


REPRO = Repro("dart-scale", "Dart vs DCQCN, TIMELY, DCTCP in a 4:1 Clos with incasts: p99/median of 8 KB flows",
              "Dart, IEEE/ACM ToN'20, Figures 11-14", build, report, CHECKS)
