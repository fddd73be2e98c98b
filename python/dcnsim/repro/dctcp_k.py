"""DCTCP's marking threshold trade-off (Alizadeh et al., SIGCOMM'10, section 3.3): a larger K
means a longer queue for no more throughput once K exceeds about C x RTT / 7."""

import os
import tempfile

from ..sweep.spec import SweepSpec
from .base import Repro
from .common import table


def build(quick: bool) -> SweepSpec:
    # Four long flows from the left side to the right side share the 10 Gb/s bottleneck.
    path = os.path.join(tempfile.gettempdir(), "dcnsim-dctcp-k-flows.csv")
    with open(path, "w") as fh:
        fh.write("src,dst,size_bytes,start_us\n")
        for i in range(4):
            fh.write(f"{i},{4 + i},{10**11},{i * 10.0}\n")
    flows = [{"kind": "flow_list", "path": path}]
    base = {
        "seed": 1, "duration_us": 20000.0 if quick else 100000.0, "measure": {"warmup_us": 5000.0},
        "topology": {"kind": "dumbbell", "hosts_per_side": 4, "host_rate_gbps": 10.0, "bottleneck_rate_gbps": 10.0,
                     "host_delay_us": 5.0, "bottleneck_delay_us": 10.0},
        "queue": {"limit_packets": 1000, "ecn": "step", "ecn_k_packets": 65},
        "transport": {"protocol": "dctcp"},
        "workload": flows,
    }
    return SweepSpec(base=base, axes={"queue.ecn_k_packets": [1, 3, 10, 65, 200]}, name="dctcp-k")


def report(df, out: str) -> str:
    from ..plots import queue_vs_goodput

    df = df.sort_values("queue.ecn_k_packets")
    queue_vs_goodput(df.assign(protocol="K=" + df["queue.ecn_k_packets"].astype(str)), f"{out}/dctcp_k.png",
                     by="protocol")
    # Goodput over the 10 Gb/s bottleneck; the ceiling is the payload share of the wire, 1436/1500.
    rows = [(int(r["queue.ecn_k_packets"]), f"{r['goodput_gbps'] / 10.0:.3f}", f"{r['max_switch_bytes'] / 1500:.0f}")
            for _, r in df.iterrows()]
    return ("DCTCP K trade-off (paper: full throughput once K > C x RTT / 7, about 7 packets here; "
            "the queue grows with K)\n"
            + table(rows, ["K (packets)", "bottleneck goodput (of 10 Gb/s)", "max switch queue (packets)"]))


REPRO = Repro("dctcp-k", "DCTCP marking threshold K: queue vs throughput", "DCTCP SIGCOMM'10 s3.3", build, report)
