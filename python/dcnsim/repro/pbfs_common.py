"""PB-FS's evaluation set-up (Aaronson and Cohen, "PB-FS: Postcard-Based Fast Start", IFIP Networking
2024, section V-A) as reusable pieces: the 320-host fabric, the lossless (PFC) and lossy (IRN, or
go-back-N without PFC) switches, the rate-based CCs with and without PB-FS, the imc10 workload at
~70% load, and the short-flow FCT statistics of Figs. 5, 7 and 8.

Fabric: a three-tier fat tree of 320 hosts, 20 ToRs x 16 hosts, 20 aggregation and 16 core
switches (k = 8 with 5 of its 8 pods: each ToR has 4 uplinks, each aggregation switch 4), 25 Gb/s
host links, 100 Gb/s fabric links, 2 us per link, 8 MB shared buffers. The DC_RTT of a 1 KB packet
is about 25 us as in the paper.

Choices where the paper or our model differ (docs/protocols/pbfs.md lists them all):
- PFC thresholds (lossless runs): as the paper states them, a port pauses its peer when it uses more
  than 11% of the free buffer (25 Gb/s ports) or 33% (100 Gb/s): `buffer_alpha_by_rate` 0.11 and
  0.33. (Until session 7: the HPCC reference's alphas 1/8 and 1/2, with which a lone port fills
  alpha / (1 + alpha) = 1/9 and 1/3 of the buffer; in steady state the fabric without PB-FS then
  pauses far less, see docs/protocols/pbfs.md.) The lossy runs (no PFC) drop at the same dynamic
  thresholds (since session 9: "the remaining configuration is identical to the previous
  simulations"; until then they dropped at the reference's alphas);
- packets carry 1000 payload bytes (48 header bytes), the reference simulator's payload (the
  paper's slot of ~4.5 full-sized packets = 1,560 ns at 25 Gb/s is a 1048-byte packet), and flow
  sizes are imc10's in such packets (`imc10_pbfs`): half of all flows are one 1000-byte packet, the
  paper's "flows shorter than 1,000 bytes (50% of all flows)";
- ECN (DCQCN, rate DCTCP): the HPCC reference's RED at 25 Gb/s host ports (Kmin 100 KB, Kmax 400 KB,
  Pmax 0.2) and at 100 Gb/s fabric ports (400 KB, 1600 KB);
- lossless runs (Figs. 5 and 6, incasts): go-back-N without timeouts (`LOSSLESS_TIMEOUTS`), as the
  reference's NIC; the rate sender's default IRN timeouts fire spuriously behind PFC pauses;
- short flows are those of at most 7000 B (7 packets; 80% of the flows, the paper's "~80%"); the
  size groups are one packet, 2-4 packets and 5-7 packets.
"""

from __future__ import annotations

import math

from ..setups import RDMA_LOSSLESS_TIMEOUTS

# The PB-FS paper's CCs with their dcnsim names.
CCS = {"DCQCN": "dcqcn", "TIMELY": "timely", "HPCC": "hpcc"}
PAYLOAD = 1000
SHORT_BYTES = 7 * PAYLOAD
GROUPS = [("1 pkt", 0, PAYLOAD), ("2-4 pkts", PAYLOAD + 1, 4 * PAYLOAD), ("5-7 pkts", 4 * PAYLOAD + 1, SHORT_BYTES)]
NET = {"mtu_bytes": PAYLOAD + 48, "header_bytes": 48, "control_bytes": 64}
CDF = "imc10_pbfs"
# Dynamic-threshold alpha per port rate: the paper's PAUSE thresholds, 11% / 33% of the free buffer,
# for the lossless runs' PAUSE and the lossy runs' drops alike (the lossy environments keep "the remaining
# configuration"). ALPHA_BY_RATE: the HPCC reference's 1/8 and 1/2 (a lone port fills 11% / 33% of the
# buffer), the lossy runs' drop thresholds until session 9.
PAUSE_ALPHA_BY_RATE = [[25.0, 0.11], [100.0, 0.33]]
ALPHA_BY_RATE = [[25.0, 0.125], [100.0, 0.5]]
LOSSY_ALPHA_BY_RATE = PAUSE_ALPHA_BY_RATE
RED = {"ecn": "red", "ecn_at": "dequeue", "red_pmax": 0.2}
# Go-back-N on the lossless fabric retransmits only on a NACK, as the HPCC reference's NIC (it has no
# timeout): the rate sender's default timeouts are IRN's 100 / 320 us, for lossy fabrics, and under
# PFC an incast's queueing delay reaches milliseconds, so they fire spuriously and each one resends
# every packet in flight (pbfs-incast: 373 timeouts and 142% more data with PB-FS on DCQCN). The
# same setting as the HPCC-paper setups (longer than any run: no timeout fires).
LOSSLESS_TIMEOUTS = RDMA_LOSSLESS_TIMEOUTS


def fabric(quick: bool = False) -> dict:
    """The paper's 320-host fat tree (the quick variant: 2 pods, 128 hosts)."""
    return {"kind": "fat_tree", "k": 8, "pods": 2 if quick else 5, "oversubscription": 4, "host_rate_gbps": 25.0,
            "core_rate_gbps": 100.0, "host_delay_us": 2.0, "core_delay_us": 2.0}


def queues() -> dict:
    """Two classes (postcards and ACKs above data); RED per port role."""
    return {"priorities": 2, **RED, "red_min_bytes": 100_000, "red_max_bytes": 400_000,
            "fabric": {"red_min_bytes": 400_000, "red_max_bytes": 1_600_000}}


def switch(pfc: bool, buffer_bytes: int = 8_000_000) -> dict:
    """Shared buffers, INT (HPCC) and CC-postcards (N = 8, Delta = 6); PFC for the lossless runs."""
    alpha = PAUSE_ALPHA_BY_RATE if pfc else LOSSY_ALPHA_BY_RATE
    s = {"buffer_bytes": buffer_bytes, "buffer_alpha_by_rate": alpha, "int": True, "postcards": True,
         "postcard_slots": 8, "postcard_recent_packets": 6}
    if pfc:
        s["pfc"] = True
    return s


def transport(cc: str, start: str, recovery: str = "go_back_n", **extra) -> dict:
    """A rate-based CC with a start mode (line_rate = the paper's "without PB-FS"/FS)."""
    t = {"protocol": cc, "fast_start": start, "data_priority": 1, "control_priority": 0, "recovery": recovery}
    if start == "pbfs":
        t["pbfs_marking_distance_packets"] = 6
    t.update(extra)
    return t


def workload(stop_us: float, load: float = 0.7) -> list:
    """imc10 (in 1000-byte packets) at `load`; arrivals stop at `stop_us` so that the counted flows finish."""
    return [{"kind": "poisson", "load": load, "cdf": CDF, "stop_us": stop_us}]


# (duration, warm-up, end of arrivals) in us. SHORT: the first milliseconds, before the fabric
# has filled (Figs. 6, 8, incasts). STEADY (Figs. 5 and 7): at 70% load the number of flows in progress keeps
# growing for about 10 ms (128 hosts: 450 at 5 ms, 730 at 10 ms, then flat); without PB-FS,
# DCQCN's and TIMELY's fabrics enter PFC head-of-line blocking only then, and short flows' p95
# climbs from 78 us (first 2.5 ms) to 700-970 us (12.5-17.5 ms) for DCQCN without PB-FS, while
# with PB-FS it settles at about 115 us. Measuring the first 6 ms (until session 7) saw only the
# ramp: gains of 1.8x (DCQCN) and 5.2x (TIMELY) instead of the paper's "over 8x".
SHORT = {True: (2000.0, 300.0, 1500.0), False: (7000.0, 1000.0, 6000.0)}
STEADY = {True: (21000.0, 10000.0, 20000.0), False: (21000.0, 10000.0, 20000.0)}


def base(quick: bool, pfc: bool, buffer_bytes: int = 8_000_000, seed: int = 1, steady: bool = False) -> dict:
    """Everything but the transport; quick: 2 pods, full: 5 pods; the SHORT or STEADY timing."""
    duration, warmup, stop = (STEADY if steady else SHORT)[quick]
    return {"seed": seed, "duration_us": duration, "measure": {"warmup_us": warmup}, "net": NET,
            "topology": fabric(quick), "queue": queues(), "switch": switch(pfc, buffer_bytes),
            "workload": workload(stop)}


def label(t: dict) -> str:
    return f"{t.get('protocol')}/{t.get('fast_start', 'line_rate')}"


def run_of(df, cc: str, start: str):
    """The finished run of one (CC, start mode)."""
    d = df[df["status"] == "done"]
    keep = [label(t) == f"{cc}/{start}" for t in d["transport"]]
    if not any(keep):
        raise LookupError(f"no finished run for {cc}/{start}")
    return d[keep].iloc[0]


def flows(df, out, cc: str, start: str):
    from ..sweep import load_flows

    return load_flows(out, run_of(df, cc, start)["key"])


def summary(df, out, cc: str, start: str) -> dict:
    from ..sweep import load_summary

    return load_summary(out, run_of(df, cc, start)["key"])


def fct_us(f, lo: int, hi: int, q: float) -> float:
    """The q-quantile FCT (us) of finished flows of lo..hi bytes started in the window."""
    d = f[(f["size_bytes"] >= lo) & (f["size_bytes"] <= hi) & f["fct_ps"].notna()]
    if "counted" in d:
        d = d[d["counted"]]
    if d.empty:
        return math.nan
    return float(d["fct_ps"].quantile(q)) / 1e6


def short_fct_us(df, out, cc: str, start: str, q: float, lo: int = 0, hi: int = SHORT_BYTES) -> float:
    return fct_us(flows(df, out, cc, start), lo, hi, q)


def max_queue(df, out, cc: str, start: str) -> float:
    return float(summary(df, out, cc, start)["queues"]["max_switch_port_bytes"])


def ratio(a: float, b: float) -> float:
    return a / b if b else math.nan
