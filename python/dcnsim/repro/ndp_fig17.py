"""NDP paper Fig. 17: permutation utilisation against the initial window for several switch buffer
sizes. IW >= 20 packets fills the network; 6-packet buffers slightly underutilise it (~90%),
8 packets give > 95%; a larger IW costs a little (more trimming)."""

from ..sweep.spec import SweepSpec
from .base import FRACTION, Repro, paper_value
from .common import done, ndp_base, table


def build(quick: bool) -> SweepSpec:
    k, dur = (6, 6000.0) if quick else (12, 20000.0)
    base = ndp_base(k, dur, 1000.0)
    base["workload"] = [{"kind": "permutation", "size_bytes": 10**11}]
    return SweepSpec(base=base, axes={"queue.limit_packets": [6, 8, 15],
                                      "transport.initial_window_packets": [1, 5, 10, 15, 20, 30, 50]},
                     name="ndp-fig17")


def _utilisation(df, iw, buffer):
    d = done(df, **{"transport.initial_window_packets": iw, "queue.limit_packets": buffer})
    return d["goodput_normalized"].iloc[0]


READ = "read off Fig. 17's utilisation grid, to the percent; the quick tree has 54 hosts, not 432"


CHECKS = [
    paper_value("utilisation, IW 30, 8-packet buffers", 0.96, 0.04, lambda df, out: _utilisation(df, 30, 8),
                physical=FRACTION, reason=READ),
    paper_value("utilisation, IW 30, 6-packet buffers", 0.90, 0.08, lambda df, out: _utilisation(df, 30, 6),
                physical=FRACTION, reason=READ),
    paper_value("utilisation, IW 20, 15-packet buffers", 0.96, 0.04, lambda df, out: _utilisation(df, 20, 15),
                physical=FRACTION, reason=READ),
]


def report(df, out: str) -> str:
    from ..plots import new_figure, save_figure

    d = df[df["status"] == "done"]
    fig, ax = new_figure(figsize=(5.5, 3.8))
    for q, sub in d.groupby("queue.limit_packets"):
        sub = sub.sort_values("transport.initial_window_packets")
        ax.plot(sub["transport.initial_window_packets"], sub["goodput_normalized"], marker="o",
                label=f"{q}-packet queues")
    ax.set_xlabel("initial window (packets)")
    ax.set_ylabel("permutation utilisation")
    ax.legend()
    save_figure(f"{out}/ndp_fig17.png", fig)
    pivot = d.pivot(index="transport.initial_window_packets", columns="queue.limit_packets",
                    values="goodput_normalized")
    rows = [(iw, *(f"{pivot.loc[iw, q]:.3f}" for q in pivot.columns)) for iw in pivot.index]
    return ("NDP Fig. 17, utilisation vs IW x buffer "
            "(paper: IW >= 20 fills the network; 6 packets ~90%, 8 packets > 95%)\n"
            + table(rows, ["IW", *(f"{q} pkts" for q in pivot.columns)]))


REPRO = Repro("ndp-fig17", "NDP sensitivity: initial window x switch buffer", "NDP SIGCOMM'17 Fig. 17", build, report,
              CHECKS)
