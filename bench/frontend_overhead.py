"""What the Python front end adds to a run: wall time, CPU time and peak memory of
`dcnsim run SPEC --out DIR --quiet` and of `python -c 'import dcnsim; dcnsim.run(SPEC)'` beside the
bench binary (`dcnsim-bench --one SPEC`) on the same spec.

    python bench/frontend_overhead.py [SPEC.toml] [--rounds 5] [--duration-us 2000]
        [--bench target/release/dcnsim-bench]

Each round runs the three commands one after the other (in a rotating order, so that a machine
getting busier or quieter does not favour one), each a child process whose peak resident memory
is its own (`ru_maxrss` of that child, as the bench reports VmHWM). It prints every round and the
medians of the per-round differences to the bench binary: the front end's overhead. On a shared
machine trust the CPU time (user + system) over the wall time. The default
spec is the bench's 432-host NDP permutation, cut to `--duration-us` of simulated time (the
overhead does not depend on it; 0 keeps the spec's own).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = ROOT / "bench" / "ndp_fattree432_permutation_100g.toml"


def measure(cmd: list) -> tuple:
    """(wall seconds, peak RSS in MiB, CPU seconds) of one child process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime


def spec_file(spec: Path, duration_us: float, tmp: Path) -> Path:
    """The spec with its duration replaced (a copy beside the temporary outputs)."""
    if not duration_us:
        return spec
    text, n = re.subn(r"(?m)^duration_us\s*=.*$", f"duration_us = {duration_us}", spec.read_text())
    if n != 1:
        sys.exit(f"{spec}: expected one top-level `duration_us = ...` line to replace, found {n}")
    out = tmp / spec.name
    out.write_text(text)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", nargs="?", type=Path, default=DEFAULT_SPEC)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration-us", type=float, default=2000.0)
    ap.add_argument("--bench", default=str(ROOT / "target" / "release" / "dcnsim-bench"))
    ap.add_argument("--python", default=sys.executable, help="the interpreter with dcnsim installed")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dcnsim-frontend-") as d:
        tmp = Path(d)
        spec = spec_file(args.spec, args.duration_us, tmp)
        cmds = {
            "bench": [args.bench, "--one", str(spec)],
            "dcnsim run": [args.python, "-m", "dcnsim", "run", str(spec), "--out", str(tmp / "out"), "--quiet"],
            "dcnsim.run()": [args.python, "-c", f"import dcnsim; dcnsim.run({str(spec)!r})"],
        }
        names = list(cmds)
        got = {n: [] for n in names}
        print(f"{spec.name}, {args.rounds} rounds: wall s / CPU s / peak MiB")
        for r in range(args.rounds):
            order = names[r % 3:] + names[:r % 3]
            for n in order:
                got[n].append(measure(cmds[n]))
            print(f"  round {r + 1}: " + "   ".join(f"{n} {w:.2f} / {c:.2f} / {m:.1f}" for n, (w, m, c) in
                                                   ((n, got[n][-1]) for n in names)), flush=True)
    print(f"\n{'':<14}{'wall s':>8}{'CPU s':>8}{'peak MiB':>10}{'+wall s':>9}{'+CPU s':>8}{'+MiB':>7}"
          "   (medians; + is over the bench, per round)")
    for n in names:
        med = [statistics.median(x[i] for x in got[n]) for i in (0, 2, 1)]
        over = [statistics.median(a[i] - b[i] for a, b in zip(got[n], got["bench"])) for i in (0, 2, 1)]
        print(f"{n:<14}{med[0]:>8.2f}{med[1]:>8.2f}{med[2]:>10.1f}{over[0]:>9.2f}{over[1]:>8.2f}{over[2]:>7.1f}")


if __name__ == "__main__":
    main()
