"""The scaling table of docs/performance.md (issue 17, item 3): the NDP permutation bench at 100 Gb/s
on fat trees of k = 8, 12, 16, 24 and 32 (128 to 8,192 hosts), with each size's CPU time per
simulated millisecond, events per CPU second and peak memory.

    python bench/scaling.py [--ks 8 12 16 24 32] [--rounds 1] [--length 1.0]
        [--bench target/release/dcnsim-bench]

Each size runs `bench/ndp_fattree432_permutation_100g.toml` with only `topology.k` and the run
length changed (shorter runs on larger trees keep every size near 25-35 M events; `--length`
multiplies every run length: the short runs flatter the large trees, whose queues are still filling). CPU time (user +
system of the bench child) rather than wall time: it is what a loaded machine disturbs least.
Compare builds only with paired runs (a round runs every size once, in order).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "bench" / "ndp_fattree432_permutation_100g.toml"
# Simulated microseconds per size; warm-up stays a tenth of the run.
DURATION_US = {8: 2000.0, 12: 2000.0, 16: 1000.0, 24: 250.0, 32: 100.0}


def spec_for(k: int, length: float) -> str:
    """The base bench spec with k and the run length replaced (the keys are on their own lines)."""
    text = BASE.read_text()
    d = DURATION_US[k] * length
    for key, value in (("k", k), ("duration_us", d), ("warmup_us", d / 10)):
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
        if n != 1:
            sys.exit(f"{BASE}: no `{key} = ` line to replace")
    return text


def run(bench: str, k: int, length: float) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(spec_for(k, length))
    try:
        p = subprocess.Popen([bench, "--one", f.name], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        out, err = p.stdout.read().decode(), p.stderr.read().decode()
    finally:
        os.unlink(f.name)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"k = {k} failed:\n{err}")
    cols = out.split()  # scenario wall_s events/s data_pkts/s peak_MiB data_pkts goodput ev/pkt
    events = int(cols[5]) * float(cols[7])  # data packets x events per packet (the bench prints no total)
    return {"cpu": usage.ru_utime + usage.ru_stime, "events": events, "peak": float(cols[4]),
            "per_pkt": float(cols[7])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ks", nargs="*", type=int, default=sorted(DURATION_US))
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--length", type=float, default=1.0, help="multiplies every size's run length")
    ap.add_argument("--bench", default=str(ROOT / "target" / "release" / "dcnsim-bench"))
    args = ap.parse_args()
    if bad := [k for k in args.ks if k not in DURATION_US]:
        sys.exit(f"--ks: no run length for k = {bad} (known: {sorted(DURATION_US)})")
    if not args.length > 0:
        sys.exit(f"--length: must be positive, got {args.length}")
    runs = {k: [] for k in args.ks}
    for _ in range(args.rounds):
        for k in args.ks:
            runs[k].append(run(args.bench, k, args.length))
    print("| k | hosts | simulated | events | CPU s | CPU s per simulated ms | events/s (CPU) | peak MiB "
          "| events/pkt |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in args.ks:
        cpu = statistics.median(r["cpu"] for r in runs[k])
        events = runs[k][0]["events"]
        ms = DURATION_US[k] * args.length / 1e3
        print(f"| {k} | {k ** 3 // 4:,} | {ms:g} ms | {events / 1e6:.1f} M | {cpu:.2f} | {cpu / ms:.2f} | "
              f"{events / cpu / 1e6:.1f} M | {max(r['peak'] for r in runs[k]):.1f} | {runs[k][0]['per_pkt']:.1f} |")


if __name__ == "__main__":
    main()
