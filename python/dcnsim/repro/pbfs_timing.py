"""PB-FS postcard timing (Aaronson and Cohen, IFIP Networking 2024, sections III-D and IV): how long a
CC-postcard takes back to its sender, and how far into its first RTT a flow is when it reacts.

Section IV: the PBT-triggering packet makes one hop less than the path to the receiver's ToR, the
CC-postcard as many hops back, "thus, it takes slightly less than DC_RTT for the CC-postcard to be received
by the sender ... in the topology considered in section V, the maximum CC-postcard RTT is 5 DC_RTT / 6".

Set-up: Fig. 7's lossy fabric with PB-FS (rate DCTCP, 2 MB buffers, no PFC, steady state: arrivals from
0 ms), cut at 10.6 ms, with a packet trace of 1024 flows arriving from about 10 ms (flow ids from the
expected number of arrivals by then: the workload's flow rate x 10 ms). From the trace: each postcard's
creation (its first enqueue at a switch, at the arrival of its PBT-triggering packet) and delivery to the
sender, the triggering packet's first transmission by the sender's NIC, the flows' first ACKs.
"""

from ..sweep.spec import SweepSpec
from . import pbfs_common as pc
from . import pbfs_fig7 as f7
from .base import Repro, paper_value
from .common import table

# imc10_pbfs's mean flow size (linear sampling; the CDF's header).
MEAN_BYTES = 133806.2
FROM_US, CUT_US, TRACED = 10_000.0, 10_600.0, 1024
HOSTS_PER_POD = 64


def first_traced(quick: bool) -> int:
    """The expected number of flows to arrive before FROM_US (Poisson arrivals at load x capacity / mean)."""
    hosts = 128 if quick else 320
    per_us = 0.7 * hosts * 25e9 / 8 / MEAN_BYTES / 1e6
    return round(per_us * FROM_US)


def build(quick: bool) -> SweepSpec:
    base = f7.variant(quick, steady=True, step=True).base
    base["transport"] = pc.transport("dctcp_rate", "pbfs", timeout_us=100.0, short_timeout_us=100.0)
    base["duration_us"] = CUT_US
    k0 = first_traced(quick)
    base["trace"] = {"flows": list(range(k0, k0 + TRACED)), "max_rows": 20_000_000}
    return SweepSpec(base=base, name="pbfs-timing")


def _key(df) -> str:
    """The sweep's one run (it has no axes)."""
    return df[df["status"] == "done"].iloc[0]["key"]


def _trace(df, out):
    import pandas as pd

    from ..sweep import load_flows
    from ..sweep.store import Store

    return pd.read_parquet(Store.open(out).run_dir(_key(df)) / "trace.parquet"), load_flows(out, _key(df))


def postcards(tr, flows):
    """One row per delivered postcard: creating switch, creation and delivery times, the PBT packet's send."""
    tr = tr.assign(node=tr["node"].astype(str))
    ctl = tr[tr["kind"] == "control"]
    keys = ["flow_id", "seq", "ack", "node", "time_ps"]
    made = ctl[(ctl["event"] == "enqueue") & ~ctl["node"].str.startswith("host")]
    came = ctl[ctl["event"] == "arrive"][keys].assign(relayed=True)
    made = made.merge(came, on=keys, how="left")
    made = made[made["relayed"].isna()][keys]  # enqueued where it did not arrive: created there
    got = ctl[ctl["event"] == "deliver"][["flow_id", "seq", "ack", "time_ps"]].rename(columns={"time_ps": "t_got"})
    p = made.merge(got, on=["flow_id", "seq", "ack"]).drop_duplicates(["flow_id", "seq", "ack"])
    data = tr[tr["kind"] == "data"]
    trig = data[data["event"] == "arrive"][["flow_id", "node", "time_ps", "seq"]].rename(columns={"seq": "psn"})
    p = p.merge(trig, on=["flow_id", "node", "time_ps"], how="left")
    sent = data[(data["event"] == "tx_start") & data["node"].str.startswith("host")]
    first = sent.groupby(["flow_id", "seq"])["time_ps"].min().rename("t_sent").reset_index()
    p = p.merge(first.rename(columns={"seq": "psn"}), on=["flow_id", "psn"], how="left")
    f = flows.set_index("flow_id")
    p["src"], p["dst"] = f.loc[p["flow_id"], "src"].values, f.loc[p["flow_id"], "dst"].values
    p["tier"] = p["node"].str.extract(r"^([a-z]+)")[0]
    # The receiver's ToR of an inter-pod flow: the ToR the data packet reached last (farthest from the source).
    p["inter_pod"] = p["src"] // HOSTS_PER_POD != p["dst"] // HOSTS_PER_POD
    return p.assign(one_way_us=(p["t_got"] - p["time_ps"]) / 1e6, loop_us=(p["t_got"] - p["t_sent"]) / 1e6)


def _dst_tor(tr, p):
    """Postcards of inter-pod flows from the receiver's ToR (the last switch the triggering packet reached)."""
    data = tr[(tr["kind"] == "data") & (tr["event"] == "arrive")].assign(node=lambda d: d["node"].astype(str))
    last = data[~data["node"].str.startswith("host")].sort_values("time_ps").groupby(["flow_id", "seq"])["node"].last()
    at = last.reindex(list(zip(p["flow_id"], p["psn"]))).values
    return p[p["inter_pod"] & (p["node"].values == at)]


def dc_rtt_us(df, out) -> float:
    from ..sweep import load_summary

    return load_summary(out, _key(df))["postcards"]["dc_rtt_ps"] / 1e6


def min_postcard_rtt(df, out) -> float:
    """The shortest PBT-send-to-postcard time of receiver-ToR postcards of inter-pod flows, in DC_RTTs."""
    tr, flows = _trace(df, out)
    d = _dst_tor(tr, postcards(tr, flows))
    return float(d["loop_us"].min()) / dc_rtt_us(df, out)


CHECKS = [paper_value("shortest CC-postcard RTT from the receiver's ToR / DC_RTT", 5 / 6, 0.05, min_postcard_rtt,
                      relative=True,
                      reason="section IV's derivation, the queue-free loop of the longest path; 5% for serialisation")]


def per_flow(tr, flows, p):
    """Eligible traced flows: time to the first postcard and the first ACK, packets sent before the postcard."""
    import pandas as pd

    f = flows.set_index("flow_id")
    traced = f[f.index.isin(tr["flow_id"].unique()) & (f["size_bytes"] >= 39_200)]
    acks = tr[(tr["kind"] == "ack") & (tr["event"] == "deliver")].groupby("flow_id")["time_ps"].min()
    e = pd.DataFrame({"start": traced["start_ps"], "card": p.groupby("flow_id")["t_got"].min().reindex(traced.index),
                      "ack": acks.reindex(traced.index)})
    data = tr[(tr["kind"] == "data") & (tr["event"] == "tx_start")].assign(node=lambda d: d["node"].astype(str))
    sent = data[data["node"].str.startswith("host")].merge(e[["card"]], left_on="flow_id", right_index=True)
    e["before"] = sent[sent["time_ps"] < sent["card"]].groupby("flow_id").size().reindex(e.index)
    return e


def report(df, out: str) -> str:
    tr, flows = _trace(df, out)
    p = postcards(tr, flows)
    e = per_flow(tr, flows, p)
    qs = [0.0, 0.1, 0.5, 0.9, 0.99, 1.0]

    def row(name, s, unit="us"):
        return (name, len(s.dropna()), *[f"{s.quantile(q):.1f}" for q in qs], unit)

    with_card = e.dropna(subset=["card"])
    rows = [row("postcard one-way (switch to sender)", p["one_way_us"]),
            *[row(f"  from {t} switches", p[p["tier"] == t]["one_way_us"]) for t in sorted(p["tier"].unique())],
            row("PBT packet sent to postcard at sender", p["loop_us"]),
            row("  receiver's ToR, inter-pod flows", _dst_tor(tr, p)["loop_us"]),
            row("flow start to first postcard", (with_card["card"] - with_card["start"]) / 1e6),
            row("flow start to first ACK", (e["ack"] - e["start"]) / 1e6),
            row("packets sent before the first postcard", with_card["before"], "packets")]
    head = ["measure", "n", *[f"q{int(q * 100)}" for q in qs], "unit"]
    early = int((with_card["card"] < with_card["ack"]).sum())
    return ("PB-FS postcard timing (Fig. 7's lossy fabric, PB-FS, traced flows from 10 ms); "
            f"DC_RTT {dc_rtt_us(df, out):.2f} us; {len(e)} eligible traced flows, {len(with_card)} got postcards, "
            f"{early} of them before their first ACK\n" + table(rows, head))


REPRO = Repro("pbfs-timing", "PB-FS CC-postcard delays and the sender's reaction time (traced, lossy fabric)",
              "Aaronson and Cohen, IFIP Networking 2024, sections III-D and IV", build, report, CHECKS)
