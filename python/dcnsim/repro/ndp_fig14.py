"""NDP paper Fig. 14: a permutation on a fat tree; NDP fills it (~92%, slowest flow ~9 Gb/s on the
432-host tree), DCTCP with per-flow ECMP does not (~40%: flow collisions). Section 6.2 adds pHost
on the same permutation with 8-packet drop-tail queues: ~70% ("despite its use of packet
spraying"); its token window of one BDP idles the receiver once sprayed packets queue. DCQCN
(lossless, "200 buffers per port, shared between interfaces", per-flow ECMP) collides as DCTCP does
(~40%). MPTCP (8 subflows with linked increases on distinct paths, 200-packet queues, setup
"mptcp-ndp-paper") finds free paths: 89%, worst flow 6 Gb/s."""

from ..sweep.spec import SweepSpec
from .base import FRACTION, Repro, paper_value
from .common import done, ndp_base, table


def build(quick: bool) -> SweepSpec:
    k, dur = (6, 10000.0) if quick else (12, 20000.0)
    base = ndp_base(k, dur, 2000.0)
    base["workload"] = [{"kind": "permutation", "size_bytes": 10**11}]
    # Each protocol as the paper runs it (transport, queues, routing, packet format): one axis of setups;
    # DCQCN's shared buffer is 200 x 9 KB per port of the k-port switches.
    dcqcn_switch = {"buffer_bytes": 200 * k * 9000, "pfc": True}
    setups = [["ndp-paper", {}], ["dctcp-ndp-paper", {}], ["phost-ndp-paper", {}], ["dcqcn-ndp-paper", dcqcn_switch],
              ["mptcp-ndp-paper", {}]]
    return SweepSpec(base=base, axes={"setup,switch": setups}, name="ndp-fig14")


def _slowest_gbps(df, out, protocol):
    from ..sweep import load_flows, load_summary

    key = done(df, protocol=protocol)["key"].iloc[0]
    secs = load_summary(out, key)["window_ps"] / 1e12
    return float(load_flows(out, key)["window_bytes"].min()) * 8 / secs / 1e9


UTIL = "a mean over every host of a permutation: a few points for a smaller tree and another simulator"


CHECKS = [
    paper_value("NDP utilisation", 0.92, 0.07, lambda df, out: done(df, protocol="ndp")["goodput_normalized"].iloc[0],
                physical=FRACTION, reason=UTIL),
    paper_value("NDP slowest flow (Gb/s)", 9.0, 1.0, lambda df, out: _slowest_gbps(df, out, "ndp"),
                reason="'even the worst flow' read off Fig. 14's sorted throughputs"),
    paper_value("DCTCP/ECMP utilisation", 0.40, 0.15,
                lambda df, out: done(df, protocol="dctcp")["goodput_normalized"].iloc[0],
                physical=FRACTION, reason="'around 40%': per-flow ECMP collisions vary with the hash seed"),
    paper_value("DCQCN/ECMP utilisation", 0.40, 0.15,
                lambda df, out: done(df, protocol="dcqcn")["goodput_normalized"].iloc[0],
                physical=FRACTION, reason="'around 40%': per-flow ECMP collisions vary with the hash seed"),
    paper_value("pHost utilisation (section 6.2)", 0.70, 0.08,
                lambda df, out: done(df, protocol="phost")["goodput_normalized"].iloc[0],
                physical=FRACTION, reason=UTIL),
    paper_value("MPTCP utilisation", 0.89, 0.06,
                lambda df, out: done(df, protocol="mptcp")["goodput_normalized"].iloc[0],
                physical=FRACTION, reason=UTIL),
    # The paper's worst flow is on the 432-host tree at steady state (htsim's MPTCP driver runs 4 s). On
    # the quick 54-host tree over 2-10 ms the slowest flows are rack-local and in-pod connections (1 and
    # 3 subflows) still growing in congestion avoidance from ssthresh 15: 2.2-5.1 Gb/s over seeds 1-6,
    # with or without the handshake; 6.2 over 10-20 ms, 7.6 over 20-50, 8.4 over 50-100
    # (docs/protocols/mptcp.md). Neither window is the paper's, so the check is made at full scale only.
    paper_value("MPTCP slowest flow (Gb/s)", 6.0, 1.5, lambda df, out: _slowest_gbps(df, out, "mptcp"), full_only=True,
                reason="'the worst flow achieves 6Gb/s': one flow of 432, the tail of a distribution"),
]


def report(df, out: str) -> str:
    from ..plots import sorted_throughput, sorted_throughput_data
    from ..sweep import load_flows, load_summary

    flows, windows = {}, {}
    for _, r in df[df["status"] == "done"].iterrows():
        flows[r["protocol"]] = load_flows(out, r["key"])
        windows[r["protocol"]] = load_summary(out, r["key"])["window_ps"]
    sorted_throughput(flows, windows, f"{out}/ndp_fig14.png")
    data = sorted_throughput_data(flows, windows)
    paper = {"ndp": ("0.92", "~9"), "dctcp": ("~0.40", "<1"), "dcqcn": ("~0.40", "<1"), "phost": ("~0.70", "-"),
             "mptcp": ("0.89", "6")}
    rows = []
    for p, sub in data.groupby("label"):
        util = df.loc[df["protocol"] == p, "goodput_normalized"].iloc[0]
        rows.append((p, f"{util:.3f}", paper[p][0], f"{sub['gbps'].min():.2f}", paper[p][1]))
    return "NDP Fig. 14, permutation on a fat tree (paper: 432 hosts, 10 Gb/s)\n" + table(
        rows, ["protocol", "utilisation", "paper", "slowest flow Gb/s", "paper"])


REPRO = Repro("ndp-fig14", "NDP vs DCTCP/ECMP, DCQCN, pHost and MPTCP permutation throughput", "NDP SIGCOMM'17 Fig. 14",
              build, report, CHECKS)
