"""Spec fragments and helpers shared by reproductions. Protocol set-ups come from dcnsim.setups."""

from ..setups import NDP_PAPER_NET


def fat_tree(k: int, gbps: float = 10.0) -> dict:
    return {"kind": "fat_tree", "k": k, "host_rate_gbps": gbps, "host_delay_us": 1.0, "core_delay_us": 1.0}


def paper_base(setup: str, k: int, duration_us: float, warmup_us: float) -> dict:
    """A fat tree run with a named setup (dcnsim.setups); axes may switch the setup."""
    return {"seed": 1, "duration_us": duration_us, "measure": {"warmup_us": warmup_us}, "topology": fat_tree(k),
            "setup": setup}


def ndp_base(k: int, duration_us: float, warmup_us: float) -> dict:
    """NDP as the paper evaluates it (setup "ndp-paper"): 9 KB packets, 8-packet trimming queues,
    WRR 10:1, source routing, IW 30."""
    return paper_base("ndp-paper", k, duration_us, warmup_us)


def dctcp_like_ndp_paper(k: int, duration_us: float, warmup_us: float) -> dict:
    """DCTCP as the NDP paper runs it (setup "dctcp-ndp-paper"): 200-packet queues, K = 30 packets, ECMP."""
    return paper_base("dctcp-ndp-paper", k, duration_us, warmup_us)


def phost_base(k: int, duration_us: float, warmup_us: float) -> dict:
    """pHost as the NDP paper runs it (setup "phost-ndp-paper"): 8-packet drop-tail queues, spraying."""
    return paper_base("phost-ndp-paper", k, duration_us, warmup_us)


def ndp_packets(n: int) -> int:
    """Bytes of `n` full NDP-paper packets of payload. The paper (and htsim) count flow sizes in
    whole 9 KB packets ("270,000 bytes (30 packets)"); sending 270,000 payload bytes in 8,936 B
    packets would add a short 31st packet that still costs its flow a full pull slot (+2.5% on an
    incast of such flows)."""
    return n * (NDP_PAPER_NET["mtu_bytes"] - NDP_PAPER_NET["header_bytes"])


def table(rows, header) -> str:
    w = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{n}}}" for n in w)
    return "\n".join([fmt.format(*header)] + [fmt.format(*map(str, r)) for r in rows])


def incast_optimum_us(senders: int, size: int, mtu: int = NDP_PAPER_NET["mtu_bytes"],
                      header: int = NDP_PAPER_NET["header_bytes"], gbps: float = 10.0) -> float:
    """The receiver's link busy with every packet of every flow exactly once (the NDP paper's optimum)."""
    mss = mtu - header
    full, rest = divmod(size, mss)
    wire = full * mtu + (rest + header if rest else 0)
    return senders * wire * 8 / (gbps * 1e3)


def done(df, **where):
    """The finished runs matching column == value for each keyword; an error if there is none."""
    d = df[df["status"] == "done"]
    for k, v in where.items():
        d = d[d[k] == v]
    if d.empty:
        raise LookupError(f"no finished run with {where}")
    return d


def incast_outcome(flows, senders: int, size: int, duration_us: float) -> dict:
    """An incast's last and first completion and its excess over the optimum, counting flows that
    had not finished when the run ended: with any unfinished, the last completion is only known to
    be later than the run's end, so `over` is a lower bound and `unfinished` says how many."""
    fct = flows["fct_ps"] / 1e6
    unfinished = int(fct.isna().sum())
    opt = incast_optimum_us(senders, size)
    last = duration_us if unfinished else float(fct.max())
    first = float(fct.min()) if unfinished < len(flows) else float("nan")
    return {"optimum": opt, "last": last, "first": first, "over": last / opt - 1, "unfinished": unfinished}


def incast_cells(o: dict) -> tuple:
    """Report cells for `incast_outcome`: last, over, first, last/first, unfinished; a last
    completion beyond the run's end is shown as `>`."""
    gt = ">" if o["unfinished"] else ""
    return (f"{gt}{o['last']:.0f}", f"{gt}{100 * o['over']:+.1f}%", f"{o['first']:.0f}",
            f"{gt}{o['last'] / o['first']:.2f}", o["unfinished"])
