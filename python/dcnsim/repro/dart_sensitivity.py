"""Dart's sensitivity to the deflection threshold (issue 13's `dart-sensitivity`; the paper's section
VI-C): IOFD at 5, 15 (default) and 20 KB in the `dart-scale` set-up (typical mix). The paper: IOFD
works well at 5-15 KB, while 20 KB, close to the ECN threshold (22.5 KB), leaves IOFD all but
disabled. We report the 8 KB p99 and median and the number of deflections; the check is the
deflections at 20 KB as a fraction of those at 15 KB (the paper: about none)."""

from ..sweep.spec import SweepSpec
from . import dart_scale as ds
from .base import Check, Repro
from .common import done, table

THRESHOLDS = (5000, 15000, 20000)


def build(quick: bool) -> SweepSpec:
    s = ds.build(quick)
    loads = [0.2] if quick else [0.2, 0.4]
    transport, queue, switch = ds.SETUPS["dart"]
    setups = [[f"dart-{t // 1000}k", transport, {"priorities": 2, **queue},
               {**ds.LOSSLESS, **switch, "iofd_threshold_bytes": t}] for t in THRESHOLDS]
    axes = {"name,transport,queue,switch": setups, "workload": [ds._workload(load, ds.MIXES["typical"])
                                                                for load in loads]}
    return SweepSpec(base=s.base, axes=axes, name="dart-sensitivity")


def deflections(df, out, threshold: int, load: float = 0.2) -> float:
    from ..sweep import load_summary

    return float(load_summary(out, ds._run(df, f"dart-{threshold // 1000}k", "typical", load))["iofd"]["deflections"])


CHECKS = [
    Check("deflections at a 20 KB threshold / at 15 KB, 20 % load (the paper: IOFD all but disabled)", 0.0, 0.5,
          lambda df, out: deflections(df, out, 20000) / max(1.0, deflections(df, out, 15000))),
]


def report(df, out: str) -> str:
    rows = []
    loads = sorted({ds._mix_load(w)[1] for w in done(df)["workload"]})
    for load in loads:
        for t in THRESHOLDS:
            name = f"dart-{t // 1000}k"
            try:
                p99 = ds.fct_8k_us(df, out, name, "typical", load, 0.99)
                median = ds.fct_8k_us(df, out, name, "typical", load, 0.5)
                rows.append((f"{load:.0%}", f"{t // 1000} KB", f"{p99:.1f}", f"{median:.1f}",
                             int(deflections(df, out, t, load))))
            except LookupError:
                rows.append((f"{load:.0%}", f"{t // 1000} KB", "-", "-", "-"))
    return ("Dart's deflection threshold: 8 KB completion times (us) and deflections\n"
            + table(rows, ["load", "threshold", "p99 8 KB", "median 8 KB", "deflections"]))


REPRO = Repro("dart-sensitivity",
              "IOFD's deflection threshold 5/15/20 KB: 20 KB, near the ECN threshold, all but disables it",
              "Dart, IEEE/ACM ToN'20, section VI-C", build, report, CHECKS)
