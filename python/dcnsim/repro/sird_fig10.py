"""SIRD paper Fig. 10 (section 6), the congested sender, on 10 Gb/s links: host 0 sends large
messages to receivers 1-4 and can fill only a quarter of each downlink; then hosts 5-8 each send one
large message to one of them. Without informed overcommitment (SThr = inf) each receiver strands
1 BDP of its B = 1.5 BDP at host 0: ~30 Gb/s in total; with SThr = BDP/2, ~40 Gb/s."""

import os
import tempfile

from ..sweep.spec import SweepSpec
from .base import Repro
from .common import table

SENDER_JOINS_US = 100.0


def build(quick: bool) -> SweepSpec:
    path = os.path.join(tempfile.gettempdir(), "dcnsim-sird-fig10-flows.csv")
    with open(path, "w") as fh:
        fh.write("src,dst,size_bytes,start_us\n")
        for r in range(1, 5):
            fh.write(f"0,{r},{10**9},0\n")
        for r in range(1, 5):
            fh.write(f"{4 + r},{r},{2 * 10**9},{SENDER_JOINS_US}\n")
    base = {
        "seed": 1, "duration_us": 3000.0 if quick else 10000.0, "measure": {"warmup_us": 1000.0},
        "topology": {"kind": "single_switch", "hosts": 9, "host_rate_gbps": 10.0, "host_delay_us": 2.0},
        "queue": {"priorities": 2},
        "routing": {"load_balancing": "ecmp"},
        "transport": {"protocol": "sird"},
        "workload": [{"kind": "flow_list", "path": path}],
        "metrics": {"sample_interval_us": 20.0},
    }
    return SweepSpec(base=base, axes={"transport.sthr_bdp": [0.5, 1e9]}, name="sird-fig10")


def report(df, out: str) -> str:
    import pandas as pd

    from ..plots import _figure, _plt
    from ..sweep import load_summary
    from ..sweep.store import Store

    rows = []
    fig, ax = _plt().subplots(figsize=(5.5, 3.6))
    for _, r in df[df["status"] == "done"].sort_values("transport.sthr_bdp").iterrows():
        s = load_summary(out, r["key"])
        label = "SThr = inf" if r["transport.sthr_bdp"] > 1e6 else f"SThr = {r['transport.sthr_bdp']} BDP"
        paper = "~30" if r["transport.sthr_bdp"] > 1e6 else "~40"
        t = s["transport"]
        rows.append((label, f"{r['goodput_gbps']:.2f}", paper, t["csn_marked_packets"], t["sb_cuts_sender"]))
        ts = pd.read_parquet(Store(out).run_dir(r["key"]) / "timeseries.parquet")
        rx = ts[(ts["series"] == "host_rx_gbps") & ts["name"].isin([f"host{h}" for h in range(1, 5)])]
        agg = rx.groupby("time_ps")["value"].sum()
        ax.plot(agg.index / 1e6, agg.values, label=label)
    ax.set_xlabel("time (us)")
    ax.set_ylabel("receivers 1-4 goodput (Gb/s)")
    ax.axvline(SENDER_JOINS_US, color="grey", lw=0.5)
    ax.legend()
    _figure(f"{out}/sird_fig10.png", fig)
    return ("SIRD Fig. 10, congested sender (aggregate goodput at the four receivers after warm-up, Gb/s; "
            "max = 4 x 10 Gb/s less headers)\n"
            + table(rows, ["setting", "dcnsim", "paper", "csn-marked pkts", "sender-loop cuts"])
            + f"\nwrote {out}/sird_fig10.png")


REPRO = Repro("sird-fig10", "SIRD informed overcommitment, congested sender", "SIRD Fig. 10", build, report)
