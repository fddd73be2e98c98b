"""Spec fragments shared by reproductions."""


def fat_tree(k: int, gbps: float = 10.0) -> dict:
    return {"kind": "fat_tree", "k": k, "host_rate_gbps": gbps, "host_delay_us": 1.0, "core_delay_us": 1.0}


def ndp_base(k: int, duration_us: float, warmup_us: float) -> dict:
    """NDP as the paper evaluates it: 9 KB packets, 8-packet trimming queues, WRR 10:1, IW 30."""
    return {
        "seed": 1, "duration_us": duration_us, "measure": {"warmup_us": warmup_us},
        "net": {"mtu_bytes": 9000, "header_bytes": 64, "control_bytes": 64},
        "topology": fat_tree(k),
        "queue": {"priorities": 2, "limit_packets": 8, "trim": True, "scheduling": "wrr", "wrr_weights": [10, 1]},
        "routing": {"load_balancing": "source"},
        "transport": {"protocol": "ndp", "initial_window_packets": 30},
    }


def dctcp_like_ndp_paper(k: int, duration_us: float, warmup_us: float) -> dict:
    """DCTCP as the NDP paper runs it: 200-packet queues, K = 30 packets, per-flow ECMP."""
    return {
        "seed": 1, "duration_us": duration_us, "measure": {"warmup_us": warmup_us},
        "net": {"mtu_bytes": 9000, "header_bytes": 64},
        "topology": fat_tree(k),
        "queue": {"limit_packets": 200, "ecn": "step", "ecn_k_packets": 30},
        "routing": {"load_balancing": "ecmp"},
        "transport": {"protocol": "dctcp", "initial_window_packets": 10},
    }


def table(rows, header) -> str:
    w = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{n}}}" for n in w)
    return "\n".join([fmt.format(*header)] + [fmt.format(*map(str, r)) for r in rows])


def phost_base(k: int, duration_us: float, warmup_us: float) -> dict:
    """pHost as the NDP paper runs it: 8-packet drop-tail queues, per-packet spraying, no trimming."""
    s = ndp_base(k, duration_us, warmup_us)
    s["queue"] = {"priorities": 2, "limit_packets": 8}
    s["routing"] = {"load_balancing": "spray"}
    s["transport"] = {"protocol": "phost"}
    return s


SETUP_KEYS = ["transport", "queue", "routing", "net"]


def setups_axis(*specs) -> dict:
    """A zipped axis that switches between whole protocol setups."""
    return {",".join(SETUP_KEYS): [[s[k] for k in SETUP_KEYS] for s in specs]}


def incast_optimum_us(senders: int, size: int, mtu: int = 9000, header: int = 64, gbps: float = 10.0) -> float:
    """The receiver's link busy with every packet of every flow exactly once (the NDP paper's optimum)."""
    mss = mtu - header
    full, rest = divmod(size, mss)
    wire = full * mtu + (rest + header if rest else 0)
    return senders * wire * 8 / (gbps * 1e3)
