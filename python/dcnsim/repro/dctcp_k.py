"""DCTCP's marking threshold trade-off (Alizadeh et al., SIGCOMM'10, section 3.3): a larger K
means a longer queue for no more throughput once K exceeds about C x RTT / 7."""

from ..sweep.spec import SweepSpec
from .base import FRACTION, Repro, at_least, ordering
from .common import done, table

# The payload share of the wire, 1436/1500: the most goodput a saturated 10 Gb/s link gives (ours).
CEILING = 1436 / 1500


def build(quick: bool) -> SweepSpec:
    # Four long flows from the left side to the right side share the 10 Gb/s bottleneck.
    flows = [{"kind": "flow_list", "flows": [[i, 4 + i, 10**11, i * 10.0] for i in range(4)]}]
    base = {
        "seed": 1, "duration_us": 20000.0 if quick else 100000.0, "measure": {"warmup_us": 5000.0},
        "topology": {"kind": "dumbbell", "hosts_per_side": 4, "host_rate_gbps": 10.0, "bottleneck_rate_gbps": 10.0,
                     "host_delay_us": 5.0, "bottleneck_delay_us": 10.0},
        "queue": {"limit_packets": 1000, "ecn": "step", "ecn_k_packets": 65},
        "transport": {"protocol": "dctcp"},
        "workload": flows,
    }
    return SweepSpec(base=base, axes={"queue.ecn_k_packets": [1, 3, 10, 65, 200]}, name="dctcp-k")


def _goodput_fraction(df, k):
    return done(df, **{"queue.ecn_k_packets": k})["goodput_gbps"].iloc[0] / 10.0


FULL = ("full throughput once K > C x RTT / 7 (section 3.3; 7 packets here), full being the wire's payload share; "
        "ours within 0.02 of it")


def _loss_at(k: int):
    return lambda df, out: _goodput_fraction(df, 65) / _goodput_fraction(df, k)


CHECKS = [
    at_least("bottleneck goodput at K = 65 (of 10 Gb/s)", CEILING, lambda df, out: _goodput_fraction(df, 65),
             claim=FULL, slack=0.02, physical=FRACTION),
    at_least("bottleneck goodput at K = 10 (of 10 Gb/s)", CEILING, lambda df, out: _goodput_fraction(df, 10),
             claim=FULL, slack=0.02, physical=FRACTION),
    # Below C x RTT / 7 the queue underflows and the link idles: K = 1 packet must lose throughput.
    # The margin: goodputs at K >= 10 agree within 0.01%, a 1% loss is a hundred times that.
    ordering("goodput at K = 65 / at K = 1", "K = 65", "K = 1", _loss_at(1), margin=1.01, baseline=1.0,
             claim="K below C x RTT / 7 loses throughput (section 3.3): ours at least 1% less at K = 1"),
]


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


REPRO = Repro("dctcp-k", "DCTCP marking threshold K: queue vs throughput", "DCTCP SIGCOMM'10 s3.3", build, report,
              CHECKS)
