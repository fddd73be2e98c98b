"""Every standard plot renders from a small real sweep, what it draws matches the table, and the figure says it
in words: legends name protocols and axes (`DCTCP, load 0.3`), titles carry no run keys."""

import numpy as np
import pandas as pd
import pytest

from dcnsim import plots
from dcnsim.sweep import SweepSpec, load_flows, load_summary, run_sweep


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("plots")
    base = {
        "seed": 1, "duration_us": 3000.0, "measure": {"warmup_us": 300.0},
        "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 4, "spines": 2, "host_rate_gbps": 10.0,
                     "core_rate_gbps": 20.0},
        "queue": {"limit_packets": 100, "ecn": "step", "ecn_k_packets": 20},
        "transport": {"protocol": "dctcp"},
        "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}],
    }
    # NewReno's packets are not ECN-capable, so the same marking queues simply never mark them.
    axes = {"transport.protocol": ["dctcp", "newreno"], "workload[0].load": [0.3, 0.6]}
    df = run_sweep(SweepSpec(base=base, axes=axes), out, workers=2, quiet=True)
    return out, df


def test_slowdown_by_group_says_what_it_averages(sweep_dir, tmp_path):
    out, df = sweep_dir
    fig = plots.slowdown_by_group(df, tmp_path / "s.png")
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["DCTCP", "NewReno"]
    data = plots.slowdown_by_group_data(df)
    assert (tmp_path / "s.png").stat().st_size > 0 and (tmp_path / "s.pdf").stat().st_size > 0
    sub = df[df["protocol"] == "dctcp"]
    row = data[(data["protocol"] == "dctcp") & (data["group"] == "B")].iloc[0]
    assert np.isclose(row["median"], sub["slowdown_B_median"].mean())
    assert (row["median_min"], row["median_max"]) == (sub["slowdown_B_median"].min(), sub["slowdown_B_median"].max())
    assert row["median_n"] == 2
    assert plots.aggregation_note(df, "protocol") == \
        "each point: mean over 2 runs (varying: workload[0].load); bars: min to max"


def test_queue_vs_goodput(sweep_dir, tmp_path):
    out, df = sweep_dir
    plots.queue_vs_goodput(df, tmp_path / "q.png")
    data = plots.queue_vs_goodput_data(df)
    assert len(data) == 4
    merged = data.merge(df, on=["protocol", "goodput_gbps"])
    assert (merged["max_queue_bytes"] == merged["max_switch_bytes_edge"]).all()


def test_queue_vs_goodput_joins_only_runs_that_differ_in_load(tmp_path):
    rows = [{"key": f"k{p}{load}{seed}", "status": "done", "protocol": p, "workload[0].load": load, "seed": seed,
             "goodput_gbps": 10 * load + seed, "max_switch_bytes": 1000 * seed + load}
            for p in ("a", "b") for load in (0.3, 0.6, 0.9) for seed in (1, 2)]
    df = pd.DataFrame(rows)
    df.attrs["axes"] = ["protocol", "workload[0].load", "seed"]
    fig = plots.queue_vs_goodput(df, tmp_path / "q.png")
    assert len(fig.axes[0].get_lines()) == 4, "one line per protocol and seed"
    assert fig.axes[0].get_title() == "one point per run (12); lines along load, one per protocol x seed"
    data = plots.queue_vs_goodput_data(df)
    assert len(data) == 12, "every run is a point"
    lines = data.groupby(["protocol", "line"])
    assert len(lines) == 4
    for _, line in lines:
        assert line["seed"].nunique() == 1 and list(line["workload[0].load"]) == [0.3, 0.6, 0.9]


def test_run_labels_are_unique_per_run():
    df = pd.DataFrame([{"key": f"key{i}", "protocol": "ndp", "seed": 1, "x": [1, i % 2]} for i in range(3)])
    df.attrs["axes"] = ["seed", "x"]
    labels = plots.run_labels(df)
    assert len(set(labels.values())) == 3
    assert labels == {"key0": "NDP, x #0, run 1 of 2", "key1": "NDP, x #1", "key2": "NDP, x #0, run 2 of 2"}


def test_queue_by_tier(sweep_dir, tmp_path):
    out, df = sweep_dir
    fig = plots.queue_by_tier(df, tmp_path / "t.png")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["DCTCP", "NewReno"]
    data = plots.queue_by_tier_data(df)
    assert set(data["protocol"]) == {"dctcp", "newreno"}
    assert (data.set_index("protocol").loc["dctcp", "edge"]
            == df[df["protocol"] == "dctcp"]["max_switch_bytes_edge"].max())


def test_fct_cdf_and_sorted_throughput(sweep_dir, tmp_path):
    out, df = sweep_dir
    flows = {r["key"]: load_flows(out, r["key"]) for _, r in df.iterrows()}
    plots.fct_cdf(flows, tmp_path / "c.png")
    data = plots.fct_cdf_data(flows)
    k = df["key"][0]
    assert len(data[data["label"] == k]) == flows[k]["fct_ps"].notna().sum()
    assert data[data["label"] == k]["cdf"].iloc[-1] == 1.0
    windows = {r["key"]: load_summary(out, r["key"])["window_ps"] for _, r in df.iterrows()}
    plots.sorted_throughput(flows, windows, tmp_path / "th.png")
    t = plots.sorted_throughput_data(flows, windows)
    expect = np.sort(flows[k]["window_bytes"].to_numpy() * 8 / (windows[k] / 1e12) / 1e9)
    assert np.allclose(t[t["label"] == k]["gbps"].to_numpy(), expect)


def test_cli_plot_and_repro_list(sweep_dir, tmp_path):
    import subprocess
    import sys

    out, _ = sweep_dir
    for kind in ["slowdown", "queue-goodput", "queue-tiers", "fct-cdf", "throughput"]:
        p = subprocess.run([sys.executable, "-m", "dcnsim", "plot", kind, str(out),
                            "--out", str(tmp_path / f"{kind}.png")], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert (tmp_path / f"{kind}.png").exists()
    p = subprocess.run([sys.executable, "-m", "dcnsim", "repro", "list"], capture_output=True, text=True)
    assert "ndp-fig14" in p.stdout and "dctcp-k" in p.stdout


def test_timeseries_plot(tmp_path):
    import dcnsim

    r = dcnsim.run({
        "duration_us": 2000.0, "metrics": {"sample_interval_us": 50.0},
        "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
        "queue": {"limit_packets": 100, "ecn": "step", "ecn_k_packets": 20},
        "transport": {"protocol": "dctcp"},
        "workload": [{"kind": "permutation", "size_bytes": 10**9}],
    })
    plots.timeseries(r.timeseries, tmp_path / "ts.png", names=["host0", "host1"])
    data = plots.timeseries_data(r.timeseries, names=["host0", "host1"])
    assert (tmp_path / "ts.png").exists()
    assert set(data["name"]) == {"host0", "host1"} and len(data) == 2 * 40
    # A permutation of long flows: after the first RTTs every host receives near line rate.
    assert data[data["time_ps"] > 500_000_000]["value"].min() > 8.0


def test_cli_fct_cdf_draws_one_curve_per_run(sweep_dir, tmp_path, capsys):
    from dcnsim.cli import main

    out, df = sweep_dir
    assert main(["plot", "fct-cdf", str(out), "--out", str(tmp_path / "c.png")]) == 0
    assert "4 curves, one per run" in capsys.readouterr().out
    labels = plots.run_labels(df)
    assert len(set(labels.values())) == len(df) == 4
    expected = [f"{p}, load {x:g}" for p in ("DCTCP", "NewReno") for x in (0.3, 0.6)]
    assert sorted(labels.values()) == sorted(expected)
    # With --label naming a column that does not tell the runs apart, runs still get their own curve.
    assert main(["plot", "throughput", str(out), "--out", str(tmp_path / "d.png"), "--label", "protocol"]) == 0
    assert "4 curves, one per run" in capsys.readouterr().out


def test_slowdown_axes_label_ticks_as_plain_distinct_numbers():
    """A narrow slowdown range (1.001-1.005) read as 1.005 x 10^0 in mathtext; labels are plain now."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dcnsim.plots import plain_ticks

    for ys in ([1.001, 1.005], [1.0, 3.0, 40.0, 700.0]):
        fig, ax = plt.subplots()
        ax.plot([0, 1, 2, 3][:len(ys)], ys, "o")
        ax.set_yscale("log")
        plain_ticks(ax.yaxis)
        fig.canvas.draw()
        lo, hi = ax.get_ylim()
        ticks = ax.yaxis.get_majorticklocs().tolist() + ax.yaxis.get_minorticklocs().tolist()
        formats = [ax.yaxis.get_major_formatter()] * len(ax.yaxis.get_majorticklocs()) + \
            [ax.yaxis.get_minor_formatter()] * len(ax.yaxis.get_minorticklocs())
        labels = [f(t) for f, t in zip(formats, ticks) if lo <= t <= hi]
        shown = [label for label in labels if label]
        assert shown and all("$" not in label and "e" not in label for label in shown), shown
        assert len(set(shown)) == len(shown), shown
        plt.close(fig)


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_legends_name_protocols_and_axes_in_words(sweep_dir):
    out, df = sweep_dir
    flows = {label: load_flows(out, key) for key, label in plots.run_labels(df).items()}
    fig = plots.fct_cdf(flows)
    ax = fig.axes[0]
    texts = legend_texts(ax)
    assert len(ax.get_lines()) == len(texts) == 4
    assert sorted(t.split(" (")[0] for t in texts) == ["DCTCP, load 0.3", "DCTCP, load 0.6", "NewReno, load 0.3",
                                                       "NewReno, load 0.6"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("flow completion time (us)", "CDF (finished flows)")
    assert ax.get_title() == "one curve per run (4)"
    assert not any(key in t for key in df["key"] for t in texts + [ax.get_title()]), "no run key in the figure"


def test_axis_words_keep_units_and_tell_alike_names_apart():
    words = plots.axis_words(["workload[0].load", "workload[1].load", "queue.ecn_k_packets", "seed"])
    assert words == {"workload[0].load": ("workload 0 load", ""), "workload[1].load": ("workload 1 load", ""),
                     "queue.ecn_k_packets": ("ecn k", "packets"), "seed": ("seed", "")}
    df = pd.DataFrame([{"key": f"k{k}", "protocol": "sird", "queue.ecn_k_packets": k} for k in (10, 20)])
    df.attrs["axes"] = ["queue.ecn_k_packets"]
    assert plots.run_labels(df) == {"k10": "SIRD, ecn k 10 packets", "k20": "SIRD, ecn k 20 packets"}
    assert plots.protocol_name("K=20") == "K=20", "a name that is not a protocol is shown as it is"


def test_every_plot_draws_on_a_given_ax_and_returns_its_figure(sweep_dir):
    out, df = sweep_dir
    flows = {r["key"]: load_flows(out, r["key"]) for _, r in df.iterrows()}
    windows = {r["key"]: load_summary(out, r["key"])["window_ps"] for _, r in df.iterrows()}
    draws = {
        "queue_vs_goodput": lambda ax: plots.queue_vs_goodput(df, ax=ax),
        "queue_by_tier": lambda ax: plots.queue_by_tier(df, ax=ax),
        "fct_cdf": lambda ax: plots.fct_cdf(flows, ax=ax),
        "sorted_throughput": lambda ax: plots.sorted_throughput(flows, windows, ax=ax),
    }
    for name, draw in draws.items():
        fig, axes = plots.new_figure(1, 2)
        assert draw(axes[1]) is fig, name
        assert axes[1].has_data() and not axes[0].has_data(), f"{name} drew on the given ax only"
        assert len(fig.axes) == 2, f"{name} added no axes"
    fig, axes = plots.new_figure(2, 2)
    assert plots.slowdown_by_group(df, ax=axes[1]) is fig
    assert [a.get_title() for a in axes[1]] == ["median slowdown", "p99 slowdown"]
    assert not axes[0][0].has_data() and fig.get_suptitle() == "", "the caller's figure keeps its own title"


def test_slowdown_by_size_of_one_run_says_the_protocol_by_name(tmp_path):
    import dcnsim

    r = dcnsim.run({
        "duration_us": 1000.0, "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
        "transport": {"protocol": "dctcp"}, "queue": {"ecn": "step", "ecn_k_packets": 20},
        "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}],
    })
    fig = plots.slowdown_by_size(r.summary, r.flows, tmp_path / "s.png")
    ax = fig.axes[0]
    assert (tmp_path / "s.png").exists()
    assert ax.get_title(loc="left").endswith(": DCTCP slowdown by flow size")
    assert legend_texts(ax) == ["median", "p99"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("flow size (bytes)", "slowdown (FCT / ideal FCT)")


def test_cli_timeseries_title_is_the_run_label_not_its_key(tmp_path, monkeypatch):
    from dcnsim.cli import main

    drawn = []
    real = plots.timeseries
    monkeypatch.setattr(plots, "timeseries", lambda *a, **kw: drawn.append(real(*a, **kw)) or drawn[-1])

    base = {"duration_us": 500.0, "metrics": {"sample_interval_us": 50.0},
            "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
            "transport": {"protocol": "dctcp"}, "workload": [{"kind": "permutation", "size_bytes": 10**6}]}
    df = run_sweep(SweepSpec(base=base, axes={"transport.protocol": ["dctcp", "newreno"]}), tmp_path / "s",
                   workers=1, quiet=True)
    key = df[df["protocol"] == "newreno"]["key"].iloc[0]
    assert main(["plot", "timeseries", str(tmp_path / "s"), "--key", key, "--out", str(tmp_path / "t.png")]) == 0
    assert drawn[0].axes[0].get_title() == "NewReno: all 4 hosts"
