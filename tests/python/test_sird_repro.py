"""The SIRD evaluation harness: its specs are valid, its configurations follow section 5.1, and
the Table 4/5 aggregation picks the right runs."""

import math

import pandas as pd
import pytest

import dcnsim
from dcnsim import repro
from dcnsim.repro import sird_common as sc


@pytest.mark.parametrize("name", ["sird-table5", "sird-fig7", "sird-fig9", "sird-fig10", "sird-runlength"])
def test_every_run_of_the_sird_reproductions_is_a_valid_spec(name):
    runs = repro.get(name).build(True).runs()
    assert runs
    for _, spec in runs:
        resolved = dcnsim.resolve(spec)
        assert resolved["transport"]["protocol"] in sc.SETUPS


def test_configurations_follow_section_5_1():
    bal = sc.workload("WKc", "balanced", 0.5)
    assert bal == [{"name": "background", "kind": "poisson", "load": 0.5, "cdf": "websearch_w5",
                    "interpolation": "log_linear"}]
    core = sc.workload("WKa", "core", 0.8)
    assert core[0]["load"] == pytest.approx(0.8 / (2 * 0.89), abs=1e-6)
    assert sc.fabric("core")["core_rate_gbps"] == 200.0 and sc.fabric("balanced")["core_rate_gbps"] == 400.0
    inc = sc.workload("WKb", "incast", 0.6)
    assert inc[0]["load"] + inc[1]["load"] == pytest.approx(0.6)
    assert inc[1]["load"] == pytest.approx(0.07 * 0.6)
    assert (inc[1]["senders"], inc[1]["size_bytes"], inc[1]["exclude_from_slowdown"]) == (30, 500_000, True)


def _row(protocol, label, goodput, offered, queue, p99):
    return {"status": "done", "protocol": protocol, ",".join(sc.CELL_KEYS): [label] + [None] * (len(sc.CELL_KEYS) - 1),
            "goodput_gbps": goodput * 144, "offered_window_gbps": offered * 144, "goodput_per_host_gbps": goodput,
            "max_switch_bytes_edge": queue, "mean_switch_bytes_edge": queue / 2, "slowdown_p99": p99,
            "switch_bytes_at_end": queue / 4}


def test_table5_takes_max_goodput_stable_max_queue_and_p99_at_half_load():
    df = pd.DataFrame([
        _row("sird", "WKc/balanced/0.50", 49.0, 50.0, 400_000, 3.0),
        _row("sird", "WKc/balanced/0.90", 85.0, 90.0, 700_000, 6.0),
        _row("dctcp", "WKc/balanced/0.50", 48.0, 50.0, 2_000_000, 7.0),
        # Delivered 70 of 90: unstable; its goodput still counts for the maximum, its queue does not.
        _row("dctcp", "WKc/balanced/0.90", 70.0, 90.0, 50_000_000, 90.0),
        # Delivered enough, but the queues were still growing at the end: unstable too.
        {**_row("dctcp", "WKc/balanced/0.80", 75.0, 80.0, 30_000_000, 50.0), "switch_bytes_at_end": 500_000_000},
    ])
    t5 = sc.table5(sc.annotate(df))
    assert t5[("sird", "WKc", "balanced")] == {"goodput": 85.0, "queue_mb": 0.7, "p99": 3.0, "unstable": [],
                                               "loads": [0.5, 0.9]}
    d = t5[("dctcp", "WKc", "balanced")]
    assert (d["goodput"], d["queue_mb"], d["p99"], d["unstable"]) == (75.0, 2.0, 7.0, [0.8, 0.9])
    n = sc.normalized(t5)
    assert n[("sird", "WKc", "balanced")] == {"goodput": 1.0, "queue_mb": 1.0, "p99": 1.0}
    assert n[("dctcp", "WKc", "balanced")]["queue_mb"] == pytest.approx(2.0 / 0.7)
    assert n[("dctcp", "WKc", "balanced")]["goodput"] == pytest.approx(75 / 85)


def test_an_unstable_half_load_run_has_no_slowdown():
    df = pd.DataFrame([_row("dctcp", "WKa/incast/0.50", 30.0, 50.0, 9e6, 50.0)])  # delivered 60%
    v = sc.table5(sc.annotate(df))[("dctcp", "WKa", "incast")]
    assert math.isnan(v["p99"]) and math.isnan(v["queue_mb"]) and v["unstable"] == [0.5]


def test_paper_table5_lookup():
    assert sc.paper_value("goodput", "sird", "WKc", "incast") == 84.13
    assert sc.paper_value("queue_mb", "dctcp", "WKa", "balanced") is None
    assert sc.fmt(None) == "unstable" and sc.fmt(math.nan) == "-"


def test_runlength_runs_are_the_table_runs_at_that_length_so_one_store_serves_both():
    from dcnsim.repro import sird_runlength as rl
    from dcnsim.sweep import run_key

    def key(wk, cfg, load, length):
        return run_key({**sc.cell_spec(wk, cfg, load, False, length_ms=length), "setup": sc.SETUPS["sird"]})

    ours = {run_key(s) for _, s in rl.build(False).runs()}
    table = {run_key(s) for _, s in repro.get("sird-table5").build(False).runs()}
    for wk, cfg, load in rl.CELLS:
        # The full variant's length is one the runlength entry measured, and its runs are the table's.
        chosen = sc.RUN_LENGTH_MS[wk]
        assert chosen in rl.LENGTHS_MS[wk]
        assert key(wk, cfg, load, chosen) in ours & table
        assert key(wk, cfg, load, rl.LENGTHS_MS[wk][0]) in ours - table
    dur, warm = sc.timing("WKc", 40.0)
    assert (dur, warm) == (40_000.0, 40_000.0 * sc.WARMUP_FRACTION["WKc"])


def test_runlength_runs_sird_and_dctcp_first_shortest_first():
    from dcnsim.repro import sird_runlength as rl

    order = [(p, s["duration_us"]) for p, s in rl.runs(False)]
    first = [p for p, _ in order[:2 * sum(len(v) for v in rl.LENGTHS_MS.values()) * 2]]
    assert set(first) == set(rl.FIRST)
    sird_c = [d for (p, d), (_, s) in zip(order, rl.runs(False)) if p == "sird" and s["name"] == "WKc/balanced/0.90"]
    assert sird_c == sorted(sird_c) and len(sird_c) == len(rl.LENGTHS_MS["WKc"])


def test_table5_runs_half_load_first_then_the_high_loads():
    loads = [sc.parse_label(s["name"])[2] for _, s in repro.get("sird-table5").build(False).runs()]
    n = len(sc.protocols()) * 9
    assert set(loads[:n]) == {0.5} and set(loads[n:2 * n]) == {0.95} and len(loads) == 8 * n


def test_converged_at_is_the_shortest_length_from_which_every_value_is_near_the_longest():
    from dcnsim.repro.sird_runlength import converged_at

    assert converged_at([5, 10, 20, 40], [50.0, 70.0, 79.0, 80.0]) == 20  # 79 within 5% of 80, 70 not
    assert converged_at([5, 10, 20, 40], [80.0, 70.0, 79.0, 80.0]) == 20  # 80 at 5 ms does not count: 10 ms breaks it
    assert converged_at([40, 5], [1.0, 1.0]) == 5
    assert math.isnan(converged_at([5, 10], [1.0, math.nan]))


def test_annotate_reads_the_cell_from_a_zipped_axis_with_the_setup():
    col = ",".join(["setup"] + sc.CELL_KEYS)
    row = {**_row("sird", "WKa/incast/0.50", 49.0, 50.0, 1e5, 2.0)}
    row[col] = ["sird-paper"] + row.pop(",".join(sc.CELL_KEYS))
    d = sc.annotate(pd.DataFrame([row]))
    assert (d["workload_name"].iloc[0], d["config"].iloc[0], d["load"].iloc[0]) == ("WKa", "incast", 0.5)


def test_max_goodput_is_checked_only_once_the_cell_ran_at_95_percent():
    entry = repro.get("sird-table5")
    what = "SIRD max goodput (Gb/s), WKc balanced"

    def outcome(rows):
        return {o.check.what: o for o in entry.check(pd.DataFrame(rows), "unused", quick=False)}[what]

    half = [_row("sird", "WKc/balanced/0.50", 49.0, 50.0, 400_000, 3.0)]
    assert outcome(half).not_run, "a 50% run alone says nothing about max goodput"
    full = half + [_row("sird", "WKc/balanced/0.95", 80.5, 95.0, 700_000, 6.0)]
    assert outcome(full).ours == 80.5 and outcome(full).ok
