"""Named protocol setups: each protocol as a paper runs it, as the spec tables that say so
(transport, queue, routing, net, switch). Comparing protocols is then one axis of names:

    setup = "sird-paper"                                   # in a spec
    [axes]
    setup = ["dctcp-sird-paper", "sird-paper"]             # in a sweep

A spec naming a setup starts from its tables; tables and keys the spec gives itself are merged over
them, key by key (`setup = "ndp-paper"` with `[transport] initial_window_packets = 15` changes only
the window). The resolved spec holds the expanded tables. The reproductions use these setups, so a
fix to how a paper is set up lands everywhere at once.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Dict, List

from .errors import SpecError

#: The tables a setup may give.
SETUP_KEYS = ("transport", "queue", "routing", "net", "switch")

# The SIRD paper's BDP (Table 2 rounds 91.5 KB at 100 Gb/s and 7.3 us to 100 KB) and framing: 1458 B
# of payload in 1538 B on the wire (headers, preamble and gap), 84 B minimum frames for control.
SIRD_PAPER_BDP = 100_000
SIRD_PAPER_NET = {"mtu_bytes": 1538, "header_bytes": 80, "control_bytes": 84}
# ExpressPass's evaluation framing (the authors' large-scale-fattree.tcl): 1538 B frames on the wire
# with a 78 B header (1460 B payload), 84 B minimum frames; credits are 76-92 B (the transport's keys).
XPASS_PAPER_NET = {"mtu_bytes": 1538, "header_bytes": 78, "control_bytes": 84}
# ns-2's FullTcp, on which the ExpressPass authors ran DCTCP, DX and HULL, opens each connection
# with a SYN / SYN-ACK round trip (`data_on_syn_ false`; tcp/tcp-full.cc: "full-tcp always models SYN
# exchange") and resends a lost SYN after the initial RTO, doubling. Their scripts set
# `rtxcur_init_ 0.001` (scripts/0616_dctcp_gdx.tcl, 0824_dctcp_xpass.tcl), but ns-2's rtt_timeout()
# (tcp/tcp.cc, `rfc2988_ true` by default) raises an RTO below `minrto_` to `minrto_` before the
# back-off, and `minrto_` stays ns-2's 0.2 s there (the scripts' `mintro_` is misspelt): every timeout
# of theirs, the SYN's included, is 200 ms x 2^retries. Their FullTcp writes a flow's FCT at the sender,
# when the ACK of its last byte arrives (FullTcpAgent::newack, from advance_bytes; ExpressPass's FCT
# ends at the receiver): `fct_end = "last_ack"`.
NS2_FULLTCP_SETUP = {"connection_setup": "handshake", "initial_rto_us": 200_000.0, "fct_end": "last_ack"}
# ns-2's DCTCP agent (tcp/tcp.cc, tcp-full.cc), for the DCTCP-based protocols among them: alpha starts at
# ns-2's default `dctcp_alpha_ 0.0` (the scripts leave it), and an ECN cut may leave under one packet of
# window, which then waits for the retransmission timer (TcpAgent::slowdown; RFC 3168 6.1.2).
NS2_DCTCP = {"initial_alpha": 0.0, "window_floor": "none"}
XPASS_PAPER_TRANSPORT = {"protocol": "expresspass", "alpha": 0.0625, "w_init": 0.0625, "early_credit_stop": False}
# The Homa simulator has no loss recovery and these runs have infinite buffers: nothing is ever lost,
# so Homa's RESEND timeout is set far above any queueing delay (a shorter one resends packets that are
# only waiting in a low-priority queue).
HOMA_LOSSLESS_TIMEOUT_US = 10_000.0
# DCTCP and Swift run over pools of pre-established connections, 40 per host pair (section 5.1).
SIRD_PAPER_POOL = 40
# The dcPIM paper's (and its simulator's) framing: 1500 B packets of 1460 B payload, 40 B control packets.
DCPIM_PAPER_NET = {"mtu_bytes": 1500, "header_bytes": 40, "control_bytes": 40}
# The dcPIM simulator's BDP: 49 packets of 1500 B (its RTT, 5.8 us, counts a full packet both ways;
# the exact base RTT, with a control packet back, gives 46): flows up to 49 packets are short.
DCPIM_PAPER_BDP = 49 * 1500
# The NDP paper's framing: 9 KB jumbo frames with 64 B headers, 64 B control packets.
NDP_PAPER_NET = {"mtu_bytes": 9000, "header_bytes": 64, "control_bytes": 64}


# The HPCC authors' ns-3 (mix/config.txt, run.py): 1000 B payloads (64 B of headers here), a 32 MB
# shared buffer per switch with PFC, RED marking at egress dequeue scaled with the port rate
# (Kmin/Kmax = 100/400 KB x rate/25G, Pmax 0.2: 400/1600 KB at 100 Gb/s host ports, 1600/6400 KB at
# 400 Gb/s fabric ports), ACKs in a strict high-priority class for DCQCN and TIMELY (ACK_HIGH_PRIO 1)
# and in the data class otherwise. The transports' own defaults are run.py's at 100 Gb/s.
HPCC_PAPER_NET = {"mtu_bytes": 1064, "header_bytes": 64, "control_bytes": 64}
HPCC_PAPER_BUFFER = 32_000_000


def _dctcp_xpass_paper(nic: dict) -> dict:
    """DCTCP as the ExpressPass authors' ns-2 scripts set it (setup texts below), with the host NIC's buffer."""
    return {
        "transport": {"protocol": "dctcp", "g": 0.0625, "max_window_packets": 180, "initial_window_packets": 2,
                      "min_rto_us": 200_000.0, **NS2_FULLTCP_SETUP, **NS2_DCTCP},
        "queue": {"limit_bytes": 250 * 1538, "ecn": "step", "ecn_k_bytes": 65 * 1538, "nic": nic},
        "routing": {"load_balancing": "ecmp"},
        "net": dict(XPASS_PAPER_NET),
    }


def _red(kmin_at_25g: int, kmax_at_25g: int, pmax: float, gbps: float) -> dict:
    scale = gbps / 25.0
    return {"ecn": "red", "ecn_at": "dequeue", "red_min_bytes": int(kmin_at_25g * scale),
            "red_max_bytes": int(kmax_at_25g * scale), "red_pmax": pmax}


def _step(k_at_10g: int, gbps: float) -> dict:
    return {"ecn": "step", "ecn_at": "dequeue", "ecn_k_bytes": int(k_at_10g * gbps / 10.0)}


def _hpcc_paper_queue(marking, high_priority_acks: bool, host_gbps: float = 100.0, fabric_gbps: float = 400.0) -> dict:
    q = {**marking(host_gbps), "fabric": marking(fabric_gbps)}
    if high_priority_acks:
        q["priorities"] = 2
        q["fabric"]["priorities"] = 2
    return q


def _hpcc_paper_switch(high_priority_acks: bool, int_: bool = False) -> dict:
    sw: dict[str, Any] = {"buffer_bytes": HPCC_PAPER_BUFFER, "pfc": True}
    if high_priority_acks:
        sw["pfc_classes"] = [1]  # the reference pauses data queues only (queue 0 is never paused)
    if int_:
        sw["int"] = True
    return sw


# The HPCC authors' ns-3 NIC (rdma-hw.cc) has no retransmission timer: a lossless fabric loses nothing,
# and an out-of-order arrival is answered by a NACK (go-back-N). The rate sender's default timeouts
# are IRN's 100 / 320 us, for lossy fabrics; behind PFC pauses and megabytes of queue they fire with
# nothing lost and resend whole windows (the Hadoop 30% + incast cell of hpcc-paper's quick variant:
# 191,773 spurious retransmissions for TIMELY, 69,694 for DCQCN). 10 s is longer than any run.
RDMA_LOSSLESS_TIMEOUTS = {"timeout_us": 1e7, "short_timeout_us": 1e7}


def _rdma_transport(protocol: str, high_priority_acks: bool, **keys) -> dict:
    t = {"protocol": protocol, **RDMA_LOSSLESS_TIMEOUTS, **keys}
    if high_priority_acks:
        t.update(data_priority=1, control_priority=0)
    return t


@dataclass(frozen=True)
class Setup:
    name: str
    summary: str
    tables: Dict[str, dict]


_SETUPS = [
    Setup("ndp-paper", "NDP as the NDP paper (SIGCOMM'17) simulates it: 9 KB packets, 8-packet trimming queues "
          "with a header queue served WRR 10:1, source-routed per-packet spraying, initial window 30 packets", {
              "transport": {"protocol": "ndp", "initial_window_packets": 30},
              "queue": {"priorities": 2, "limit_packets": 8, "trim": True, "scheduling": "wrr", "wrr_weights": [10, 1]},
              "routing": {"load_balancing": "source"},
              "net": dict(NDP_PAPER_NET),
          }),
    # Fig. 2's naive trimming: CP (Cheng et al., NSDI'14) as the NDP authors' CutPayloadQueue has
    # it: one FIFO, payloads cut above a threshold of half the buffer (8 of 16 packets here).
    Setup("cp-ndp-paper", "NDP senders on naive trimming switches (CP, the NDP paper's Fig. 2): 9 KB packets, one "
          "FIFO per port, payloads cut above 8 packets with the headers queued behind the data, drops above 16 "
          "packets", {
              "transport": {"protocol": "ndp", "initial_window_packets": 30},
              "queue": {"priorities": 1, "limit_packets": 8, "trim": True, "trim_mode": "cut_payload",
                        "header_limit_bytes": 16 * NDP_PAPER_NET["mtu_bytes"], "bounce": False},
              "routing": {"load_balancing": "source"},
              "net": dict(NDP_PAPER_NET),
          }),
    # The NDP paper's TCPs open with a handshake ("starts sending data after the three-way handshake");
    # htsim's code, behind its figures, agrees: a TcpSrc that is not established sends a SYN and waits for
    # the SYN/ACK before any data (Broadcom/csg-htsim sim/tcp.cpp, TcpSrc::send_packets), its DCTCPSrc
    # (sim/dctcp.cpp) is a TcpSrc, and its MPTCP subflows are TcpSrcs each opening its own, all at the
    # connection's start (sim/mtcp.cpp addSubflow; the datacenter mains connect every subflow at the same
    # start time). Hence connection_setup = "handshake" on the NDP paper's DCTCP and MPTCP. Their RTO:
    # htsim's TcpSrc floors it at 1 ms but only a scanner checks the timers, every 10 ms, so none fires
    # sooner (as mptcp-ndp-paper). With our 200 us floor the SYN-ACK's RTT sample from an empty path set
    # the first window's RTO low enough to fire spuriously in incasts (Fig. 16 quick, N = 53: 100
    # timeouts and +17% over the optimum; with 10 ms none and +0.8%).
    Setup("dctcp-ndp-paper", "DCTCP as the NDP paper runs it: 9 KB packets, 200-packet queues, ECN marking at "
          "K = 30 packets, per-flow ECMP, initial window 10 packets, a SYN / SYN-ACK handshake before data, 10 ms RTO "
          "floor (htsim's timer scan)", {
              "transport": {"protocol": "dctcp", "initial_window_packets": 10, "connection_setup": "handshake",
                            "min_rto_us": 10000.0, "initial_rto_us": 10000.0},
              "queue": {"limit_packets": 200, "ecn": "step", "ecn_k_packets": 30},
              "routing": {"load_balancing": "ecmp"},
              "net": {"mtu_bytes": 9000, "header_bytes": 64},
          }),
    # Section 6.1 on Fig. 16: "DCTCP uses ECN to get early feedback, as well as large shared buffer
    # switches to absorb initial bursts". The paper gives no buffer size: 9 MB per switch is a 10 Gb/s
    # shared-buffer switch of its time (Broadcom Trident+ class), handed out by dynamic thresholds
    # with alpha = 1 (a lone congested port may take half the free buffer). K = 30 packets as in the
    # paper. The sender is the one of the authors' DCTCP incast driver (nets-cs-pub-ro/NDP
    # sim/datacenter/main_dctcp_incast_shortflows.cpp: N x 50 packets into host 0 of 432): IW 10 with
    # ssthresh 10 packets, so no slow start; initial RTO 10 ms; TcpSrc's 1 ms RTO floor, checked by a
    # timer scanner that runs every 1 ms in that driver (the permutation drivers scan every 10 ms,
    # hence dctcp-ndp-paper's 10 ms floor). Measured at N = 431 (seeds 1-5): +4.7..+10.0% over the
    # optimum with these timers, +1.2..+25.2% with a 10 ms floor and slow start (the last flow waits
    # out whole 10 ms timeouts). The driver's own switches are per-port ECN queues (194 packets,
    # marking at 15), which the paper's text replaces by shared buffers (+79% at 431 with them).
    Setup("dctcp-shared-ndp-paper", "DCTCP on large shared-buffer switches, as the NDP paper runs its incasts "
          "(Fig. 16): 9 KB packets, 9 MB per switch with dynamic thresholds (alpha = 1), ECN marking at K = 30 "
          "packets, per-flow ECMP, initial window 10 packets without slow start, a SYN / SYN-ACK handshake before "
          "data, 10 ms initial RTO and a 1 ms RTO floor (the authors' htsim DCTCP incast driver)", {
              "transport": {"protocol": "dctcp", "initial_window_packets": 10, "slow_start": False,
                            "connection_setup": "handshake", "min_rto_us": 1000.0, "initial_rto_us": 10000.0},
              "queue": {"ecn": "step", "ecn_k_packets": 30},
              "switch": {"buffer_bytes": 9_000_000, "buffer_alpha_shift": 0},
              "routing": {"load_balancing": "ecmp"},
              "net": {"mtu_bytes": 9000, "header_bytes": 64},
          }),
    # Section 6.1: "DCQCN uses 200 buffers per port, shared between interfaces" and marks at 20
    # packets. 200 x 9 KB x 12 ports = 21.6 MB per switch of the 432-host tree (k = 12), handed out by
    # dynamic thresholds (dcnsim's default alpha); PFC on every class; per-flow ECMP. The DCQCN
    # reaction-point parameters are the dcqcn protocol's defaults (the paper gives none); its
    # retransmission timeout is raised to 10 ms, above the deep queues' delays (200 x 9 KB = 1.44 ms
    # per port at 10 Gb/s): the default 320 us (IRN's, for 100 Gb/s) fired 1,440 times without a
    # loss in Fig. 19 and resent 19,517 packets.
    Setup("dcqcn-ndp-paper", "DCQCN as the NDP paper runs it: 9 KB packets, lossless (PFC) switches with 200 "
          "buffers per port shared between interfaces (21.6 MB per k = 12 switch), ECN marking at 20 packets, "
          "per-flow ECMP, 10 ms retransmission timeout", {
              "transport": {"protocol": "dcqcn", "timeout_us": 10_000.0, "short_timeout_us": 10_000.0},
              "queue": {"ecn": "step", "ecn_k_packets": 20},
              "switch": {"buffer_bytes": 200 * 12 * 9000, "pfc": True},
              "routing": {"load_balancing": "ecmp"},
              "net": {"mtu_bytes": 9000, "header_bytes": 64},
          }),
    # Section 6.1: "DCTCP and MPTCP use 200 packet output queues". The rest is htsim's, the simulator
    # behind the paper's figures (its MPTCP permutation runs): 8 subflows on distinct random source
    # routes with linked increases (COUPLED_INC), initial window 10 and ssthresh 15 packets per
    # subflow. htsim's TcpSrc floors its RTO at 1 ms, but its timers are checked by a scanner every
    # 10 ms, so no timeout fires sooner: a 10 ms floor here. With a 1 ms floor, timeouts fire while
    # packets sit behind 200 x 9 KB queues (1.44 ms each) and go-back-N floods the fabric: on the
    # 128-host tree over 100-200 ms, 867 timeouts and 6 flows below 5 Gb/s, against none with 10 ms
    # (docs/protocols/mptcp.md).
    Setup("mptcp-ndp-paper", "MPTCP as the NDP paper runs it (htsim): 9 KB packets, 200-packet drop-tail queues, "
          "8 subflows with linked increases on distinct source routes, initial window 10 and ssthresh 15 packets "
          "per subflow, 10 ms RTO floor (htsim's timer scan), a SYN / SYN-ACK handshake per subflow before its "
          "data (htsim's TcpSrc subflows; see dctcp-ndp-paper)", {
              "transport": {"protocol": "mptcp", "subflows": 8, "initial_window_packets": 10,
                            "initial_ssthresh_packets": 15, "min_rto_us": 10000.0, "initial_rto_us": 10000.0,
                            "connection_setup": "handshake"},
              "queue": {"limit_packets": 200},
              "routing": {"load_balancing": "source"},
              "net": dict(NDP_PAPER_NET),
          }),
    Setup("phost-ndp-paper", "pHost as the NDP paper's baseline: 9 KB packets, 8-packet drop-tail queues with two "
          "priority classes, per-packet spraying, no trimming", {
              "transport": {"protocol": "phost"},
              "queue": {"priorities": 2, "limit_packets": 8},
              "routing": {"load_balancing": "spray"},
              "net": dict(NDP_PAPER_NET),
          }),
    Setup("sird-paper", "SIRD with the SIRD paper's Table 2 (NSDI'25): B = 1.5, UnschT = 1, SThr = 0.5 BDP of "
          "100 KB; ECN at NThr = 1.25 BDP on fabric links only; two priority classes; per-packet spraying; "
          "1538 B frames", {
              "transport": {"protocol": "sird", "bdp_bytes": SIRD_PAPER_BDP},
              "queue": {"priorities": 2, "fabric": {"ecn": "step", "ecn_k_bytes": int(1.25 * SIRD_PAPER_BDP)}},
              "routing": {"load_balancing": "spray"},
              "net": dict(SIRD_PAPER_NET),
          }),
    Setup("dctcp-sird-paper", "DCTCP as the SIRD paper runs it (Table 2): initial window 1 BDP (66 packets), "
          "g = 0.08, ECN step marking at 1.25 BDP on every switch port, per-flow ECMP, 200 us minimum RTO, "
          "40 pooled connections per host pair, 1538 B frames", {
              "transport": {"protocol": "dctcp", "g": 0.08, "initial_window_packets": 66, "min_rto_us": 200.0,
                            "connection_pool": SIRD_PAPER_POOL},
              "queue": {"ecn": "step", "ecn_k_bytes": int(1.25 * SIRD_PAPER_BDP)},
              "routing": {"load_balancing": "ecmp"},
              "net": dict(SIRD_PAPER_NET),
          }),
    Setup("dcpim-paper", "dcPIM as its paper's simulations (SIGCOMM'22) run it: r = 4 rounds of 1.3 control RTTs, "
          "k = 4 channels, data phase = matching phase, flows <= 1 BDP unscheduled; control in class 0 and data in "
          "classes 1-6 by flow size (the simulator's packet_priority), 500 KB port buffers, per-packet spraying, "
          "1500 B packets with 40 B headers, BDP 49 packets", {
              "transport": {"protocol": "dcpim", "data_priorities": "by_size", "bdp_bytes": DCPIM_PAPER_BDP},
              "queue": {"priorities": 7, "limit_bytes": 500_000},
              "routing": {"load_balancing": "spray"},
              "net": dict(DCPIM_PAPER_NET),
          }),
    Setup("dcpim-sird-paper", "dcPIM as the SIRD paper runs it (Table 2: same as Cai et al.): the dcPIM simulator's "
          "parameters, three priority classes, per-packet spraying, BDP 100 KB, 1538 B frames", {
              "transport": {"protocol": "dcpim", "bdp_bytes": SIRD_PAPER_BDP},
              "queue": {"priorities": 3},
              "routing": {"load_balancing": "spray"},
              "net": dict(SIRD_PAPER_NET),
          }),
    # The baselines of the ExpressPass, Dart and SIRD evaluations, each with its own paper's parameters
    # (docs/protocols/{rcp,dx,hull}.md); the fabric (rates, buffers, routing) is the experiment's.
    Setup("rcp-paper", "RCP with its papers' parameters: routers compute the fair-share rate with alpha = 0.1, "
          "beta = 1, d0 = the base RTT; senders start at the advertised rate", {
              "transport": {"protocol": "rcp"},
              "switch": {"rcp": True, "rcp_alpha": 0.1, "rcp_beta": 1.0},
          }),
    Setup("dx-paper", "DX (ATC'15 / ToN'17): +1 MSS per RTT without queuing delay, else a cut by queuing "
          "delay / RTT", {
              "transport": {"protocol": "dx", "target_queuing_delay_us": 0.0},
          }),
    Setup("hull-paper", "HULL (NSDI'12): paced DCTCP over phantom queues draining at 0.95 of line rate and "
          "marking above 1 KB; no real-queue marking", {
              "transport": {"protocol": "hull", "g": 1.0 / 16.0, "pace_data": True},
              "switch": {"phantom_queue": True, "phantom_drain_rate_fraction": 0.95,
                         "phantom_mark_threshold_bytes": 1000},
          }),
    Setup("expresspass-paper", "ExpressPass as its paper evaluates it (SIGCOMM'17 section 6.3, the authors' ns-2 "
          "script): alpha = w_init = 1/16, credit queues of 8 credits, data queues of 250 x 1538 B (host NICs: "
          "1,000 x 1538 B; the script's XPassDropTail limits bytes, so small control packets take little room), "
          "no early credit stop (the code gained it in 2018, after the paper), symmetric ECMP, 1538 B frames", {
              "transport": dict(XPASS_PAPER_TRANSPORT),
              "queue": {"limit_bytes": 250 * 1538, "nic": {"limit_bytes": 1000 * 1538}},
              "routing": {"load_balancing": "ecmp"},
              "net": dict(XPASS_PAPER_NET),
          }),
    Setup("expresspass-shuffle-paper", "expresspass-paper with ns-2's default retransmission timeout, 100 ms (the "
          "MapReduce shuffle's script is not public; the fat-tree script's 100 us makes each of a host's 2,496 "
          "waiting flows re-send its credit request every 100 us: 15 Gb/s of requests)", {
              "transport": {**XPASS_PAPER_TRANSPORT, "timeout_us": 100_000.0},
              "queue": {"limit_bytes": 250 * 1538, "nic": {"limit_bytes": 1000 * 1538}},
              "routing": {"load_balancing": "ecmp"},
              "net": dict(XPASS_PAPER_NET),
          }),
    Setup("dctcp-xpass-paper", "DCTCP as the ExpressPass authors' ns-2 scripts set it at 10 Gb/s: ECN marking at "
          "K = 65 packets, g = 1/16, window cap 180 packets, initial window 2 packets (ns-2's default; the scripts "
          "leave it), minimum RTO 200 ms (ns-2's default: the scripts set `mintro_ 0.004`, a misspelt key, so the "
          "4 ms they meant never applied), switch queues of 250 x 1538 B with K = 65 x 1538 B counted in bytes (ns-2 "
          "RED's `queue_in_bytes_ true`, `mean_pktsize_ 1538` in the scripts), 1,000-packet host NICs (the scripts' "
          "DropTail), per-flow ECMP, 1538 B frames; each connection opens "
          "with ns-2 FullTcp's SYN / SYN-ACK round trip, a lost SYN resent after 200 ms (the scripts' "
          "`rtxcur_init_ 0.001` raised to `minrto_` by ns-2's rtt_timeout), doubling; FCTs end at the sender's "
          "last ACK, where the authors' FullTcp writes them; alpha starts at 0 (ns-2's `dctcp_alpha_` default) and an "
          "ECN cut may leave under one packet of window, which then waits for the retransmission timer (ns-2's "
          "TcpAgent::slowdown has no floor; RFC 3168 6.1.2)",
          _dctcp_xpass_paper(nic={"limit_packets": 1000})),
    Setup("dctcp-shuffle-paper", "dctcp-xpass-paper with the host's buffer ExpressPass has in the same figure "
          "(Fig. 17's MapReduce shuffle, whose script is not public): 1,000 x 1538 B counted in bytes, as the "
          "authors' XPassDropTail and ns-2's RED (`queue_in_bytes_ true`) count it, so SYNs and ACKs take little "
          "room; a 1,000-packet NIC locks out most of a host's 2,496 connections",
          _dctcp_xpass_paper(nic={"limit_bytes": 1000 * 1538})),
    Setup("xpass-sird-paper", "ExpressPass as the SIRD paper runs it (Table 2, and the SIRD authors' ns-2 port of "
          "the ExpressPass code): alpha = w_init = 1/16, target loss 1/8, the code's adaptive initial rate (AIR: a "
          "message of n < 40 packets starts at alpha x n / 40), early credit stop, symmetric ECMP, the authors' "
          "credit queues, 1538 B frames", {
              "transport": {"protocol": "expresspass", "alpha": 0.0625, "w_init": 0.0625, "target_loss": 0.125,
                            "adaptive_start_packets": 40},
              "routing": {"load_balancing": "ecmp"},
              "net": dict(SIRD_PAPER_NET),
          }),
    Setup("swift-sird-paper", "Swift as the SIRD paper runs it (Table 2, its OMNeT++ Swift port): initial window "
          "1 BDP (66 packets), base target 15 us + 1 us per hop, flow scaling over 75 us (Swift's defaults here), "
          "no ECN, per-flow ECMP, 40 pooled connections per host pair, 1538 B frames", {
              "transport": {"protocol": "swift", "initial_window_packets": 66, "connection_pool": SIRD_PAPER_POOL},
              "queue": {},
              "routing": {"load_balancing": "ecmp"},
              "net": dict(SIRD_PAPER_NET),
          }),
    Setup("homa-sird-paper", "Homa as the SIRD paper runs it (Table 2: the Homa paper's settings at 100 Gb/s, "
          "the port of the Homa simulator): RTTbytes 100 KB, 8 priority levels split by the workload's "
          "unscheduled share of bytes, overcommitment 7, unscheduled cut-offs from the workload, per-packet "
          "spraying, a 10 ms RESEND timeout (no loss with infinite buffers), 1538 B frames", {
              "transport": {"protocol": "homa", "rtt_bytes": SIRD_PAPER_BDP, "priority_levels": 8,
                            "overcommitment": 7, "timeout_us": HOMA_LOSSLESS_TIMEOUT_US},
              "queue": {"priorities": 8},
              "routing": {"load_balancing": "spray"},
              "net": dict(SIRD_PAPER_NET),
          }),
    Setup("dcqcn-hpcc-paper", "DCQCN as the HPCC paper (SIGCOMM'19) runs it at 100 Gb/s (the authors' ns-3 "
          "run.py --cc dcqcn, Mellanox's tuning): alpha update 1 us, rate decrease check 4 us, increase timer "
          "300 us, g 1/256, F 1, AI/HAI 20/200 Mb/s, min rate 1 Gb/s; RED at dequeue 400/1600 KB (host ports), "
          "1600/6400 KB (400G ports), Pmax 0.2; 32 MB PFC buffers; ACKs high priority; 1000 B payloads", {
              "transport": _rdma_transport("dcqcn", True, alpha_update_interval_us=1.0, rate_decrease_interval_us=4.0,
                                           rate_increase_interval_us=300.0, g=1.0 / 256, fast_recovery_steps=1,
                                           ai_rate_gbps=0.02, hai_rate_gbps=0.2, min_rate_gbps=1.0),
              "queue": _hpcc_paper_queue(lambda g: _red(100_000, 400_000, 0.2, g), True),
              "switch": _hpcc_paper_switch(True),
              "net": dict(HPCC_PAPER_NET),
          }),
    Setup("timely-hpcc-paper", "TIMELY as the HPCC paper runs it (ns-3 run.py --cc timely): T_low 50 us, T_high "
          "500 us, beta 0.8, AI 100 Mb/s at 100 Gb/s, HAI after 5; the same marking, buffers, high-priority ACKs "
          "and 1000 B payloads as dcqcn-hpcc-paper (TIMELY ignores ECN)", {
              "transport": _rdma_transport("timely", True),
              "queue": _hpcc_paper_queue(lambda g: _red(100_000, 400_000, 0.2, g), True),
              "switch": _hpcc_paper_switch(True),
              "net": dict(HPCC_PAPER_NET),
          }),
    Setup("hpcc-paper", "HPCC as the HPCC paper runs it (ns-3 run.py --cc hp): eta 0.95, maxStage 0, AI 40 Mb/s at "
          "100 Gb/s, window = max BDP x rate / line; INT at every switch egress; 32 MB PFC buffers; ACKs in the "
          "data class; 1000 B payloads", {
              "transport": _rdma_transport("hpcc", False),
              "queue": {},
              "switch": _hpcc_paper_switch(False, int_=True),
              "net": dict(HPCC_PAPER_NET),
          }),
    Setup("dctcp-rate-hpcc-paper", "DCTCP as the HPCC paper's ns-3 runs it (run.py --cc dctcp, a NIC rate "
          "controller): g 1/16, +615 Mb/s per window, BDP window; step marking at dequeue at 30 KB x rate/10G "
          "(300 KB at 100 Gb/s, 1200 KB at 400 Gb/s); 32 MB PFC buffers; ACKs in the data class; 1000 B payloads", {
              "transport": _rdma_transport("dctcp_rate", False),
              "queue": _hpcc_paper_queue(lambda g: _step(30_000, g), False),
              "switch": _hpcc_paper_switch(False),
              "net": dict(HPCC_PAPER_NET),
          }),
]

SETUPS: Dict[str, Setup] = {s.name: s for s in _SETUPS}


def names() -> List[str]:
    return list(SETUPS)


def get(name, field: str = "setup") -> Setup:
    """The setup called `name`; a SpecError at `field` naming the known ones otherwise."""
    if not isinstance(name, str):
        raise SpecError(field, f"expected a setup name (a string), got {type(name).__name__} {name!r}")
    if name not in SETUPS:
        raise SpecError(field, f"unknown setup \"{name}\"; known: {', '.join(SETUPS)}")
    return SETUPS[name]


def tables(name: str) -> Dict[str, dict]:
    """A fresh copy of the setup's tables (callers may edit it)."""
    return copy.deepcopy(get(name).tables)


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def expand(spec: dict) -> dict:
    """The spec with its `setup` (if any) replaced by the setup's tables, the spec's own merged over them."""
    if "setup" not in spec:
        return spec
    spec = dict(spec)
    setup = get(spec.pop("setup"))
    own = spec.get("transport")
    mine = setup.tables["transport"]["protocol"]
    if isinstance(own, dict) and own.get("protocol", mine) != mine:
        raise SpecError("transport.protocol", f"\"{own['protocol']}\" contradicts setup \"{setup.name}\" "
                                              f"(protocol {mine}): drop one of them")
    for key, table in setup.tables.items():
        own = spec.get(key)
        if own is None:
            spec[key] = copy.deepcopy(table)
        elif isinstance(own, dict):
            spec[key] = _merge(copy.deepcopy(table), own)
        # Anything else is left for the core to reject, naming the field.
    return spec
