"""Where the flows of `dcnsim repro xpass-fig21` spend their time at 10 and 40 Gb/s.

Both speeds run the same flows (sizes, endpoints, arrival order), so each flow is paired with itself.
For each protocol given, per workload, this prints:
- per size bin: mean FCT at both speeds, the speed-up, and ideal / measured FCT at both speeds;
- for XL flows (>= 1 MB), a fit of FCT = fixed + size x cost at each speed. A per-MB cost falling
  4x means the flows get the same share of the link at both speeds. The fixed part does not shrink
  with the rate (it is what keeps the speed-up below 4);
- for S flows (< 10 KB), mean and median FCT per packet count.

Usage: python scripts/xpass_fig21_breakdown.py STORE [protocol,...]
(STORE is the --out directory of `dcnsim repro xpass-fig21 --quick`; protocols default to
expresspass,dctcp)."""

import glob
import json
import os
import sys

import numpy as np
import pandas as pd

from dcnsim.sweep import load_flows

BINS = [0, 1e4, 1e5, 1e6, 3e6, 1e7, 1e12]


def paired(root: str, protocol: str, workload: str) -> pd.DataFrame:
    """The finished flows of both speeds, joined on flow id; FCTs in us."""
    runs = {}
    for d in glob.glob(os.path.join(root, "runs", "*")):
        spec = json.load(open(os.path.join(d, "spec.json")))
        if spec["transport"]["protocol"] == protocol and spec["name"].startswith(workload + "/"):
            runs[spec["topology"]["host_rate_gbps"]] = load_flows(root, os.path.basename(d))
    m = runs[10.0].merge(runs[40.0], on="flow_id", suffixes=("10", "40"))
    m = m[m.fct_ps10.notna() & m.fct_ps40.notna()].copy()
    if not (m.size_bytes10 == m.size_bytes40).all():
        raise ValueError(f"{protocol} {workload}: the two speeds ran different flows")
    for s in ("10", "40"):
        m["f" + s] = m["fct_ps" + s].astype(float) / 1e6
        m["i" + s] = m["ideal_fct_ps" + s].astype(float) / 1e6
    return m


def report(m: pd.DataFrame) -> None:
    m["bin"] = pd.cut(m.size_bytes10, BINS)
    g = m.groupby("bin", observed=True).agg(
        n=("f10", "size"), f10=("f10", "mean"), f40=("f40", "mean"), i10=("i10", "mean"), i40=("i40", "mean")
    )
    g["speedup"] = g.f10 / g.f40
    g["eff10"], g["eff40"] = g.i10 / g.f10, g.i40 / g.f40
    print(g.round(3).to_string())
    xl = m[m.size_bytes10 >= 1e6]
    if len(xl) > 2:
        fits = {s: np.polyfit(xl.size_bytes10 / 1e6, xl["f" + s], 1) for s in ("10", "40")}
        for s, (cost, fixed) in fits.items():
            print(f"  XL {s} Gb/s: FCT = {fixed:.0f} us + {cost:.0f} us/MB ({8e6 / cost / 1e3:.2f} Gb/s marginal)")
        print(f"  per-MB cost ratio 10/40: {fits['10'][0] / fits['40'][0]:.2f}")
    s = m[m.size_bytes10 < 1e4].copy()
    s["packets"] = np.ceil(s.size_bytes10 / 1460).astype(int)
    print(
        s.groupby("packets")
        .agg(
            n=("f10", "size"),
            f10=("f10", "mean"),
            f40=("f40", "mean"),
            med10=("f10", "median"),
            med40=("f40", "median"),
        )
        .round(1)
        .to_string()
    )


def main() -> None:
    root = sys.argv[1]
    protocols = sys.argv[2].split(",") if len(sys.argv) > 2 else ["expresspass", "dctcp"]
    for wk in ("search", "webserver"):
        for p in protocols:
            print(f"== {p} {wk}")
            report(paired(root, p, wk))


if __name__ == "__main__":
    main()
