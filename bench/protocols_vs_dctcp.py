"""Each protocol's delivered data packets per CPU second beside DCTCP's (issue 17, item 6).

    python bench/protocols_vs_dctcp.py [bench/protocols/*.toml] [--rounds 3]
        [--bench target/release/dcnsim-bench]

Every protocol's run is paired with a DCTCP run just before it (`bench/protocols/dctcp.toml`,
same fabric and load), because the machine's speed drifts between runs; the ratio of the two
rates, median over the rounds with its range, is what docs/performance.md tabulates. CPU time
(user + system of the bench child) rather than wall time: it is what a loaded machine disturbs
least.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOCOLS = ROOT / "bench" / "protocols"


def run(bench: str, spec: Path) -> tuple:
    """(data packets delivered, CPU seconds, events per data packet) of one `dcnsim-bench --one`."""
    p = subprocess.Popen([bench, "--one", str(spec)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    out, err = p.stdout.read().decode(), p.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{spec} failed:\n{err}")
    cols = out.split()  # scenario wall_s events/s data_pkts/s peak_MiB data_pkts goodput ev/pkt
    return int(cols[5]), usage.ru_utime + usage.ru_stime, float(cols[7])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bench", default=str(ROOT / "target" / "release" / "dcnsim-bench"))
    args = ap.parse_args()
    dctcp = PROTOCOLS / "dctcp.toml"
    specs = [s for s in (args.specs or sorted(PROTOCOLS.glob("*.toml"))) if s.resolve() != dctcp.resolve()]
    print(f"{'protocol':<14}{'data pkts per CPU s':>20}{'vs DCTCP':>10}{'range':>14}{'events/pkt':>12}")
    reference = []
    for spec in specs:
        ratios, rates, per_pkt = [], [], 0.0
        for _ in range(args.rounds):
            base_pkts, base_cpu, _ = run(args.bench, dctcp)
            reference.append(base_pkts / base_cpu)
            pkts, cpu, per_pkt = run(args.bench, spec)
            rates.append(pkts / cpu)
            ratios.append((pkts / cpu) / (base_pkts / base_cpu))
        print(f"{spec.stem:<14}{statistics.median(rates) / 1e3:>18.0f} k{statistics.median(ratios):>10.2f}"
              f"{f'{min(ratios):.2f}-{max(ratios):.2f}':>14}{per_pkt:>12.1f}", flush=True)
    if reference:
        print(f"(dctcp, the reference: {statistics.median(reference) / 1e3:.0f} k data packets per CPU second, "
              f"{min(reference) / 1e3:.0f}-{max(reference) / 1e3:.0f} k over its {len(reference)} runs)")


if __name__ == "__main__":
    main()
