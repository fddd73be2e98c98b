"""The NDP reproductions: every run of the quick and full variants is a valid spec, and Fig. 22
uses htsim's failure set-up."""

import pytest

import dcnsim
from dcnsim import repro

NDP_REPROS = ["ndp-fig2", "ndp-fig4", "ndp-fig14", "ndp-fig15", "ndp-fig16", "ndp-fig17", "ndp-fig19", "ndp-fig20",
              "ndp-fig21", "ndp-fig22", "ndp-fig23", "ndp-prio", "ndp-scale"]


@pytest.mark.parametrize("name", NDP_REPROS)
@pytest.mark.parametrize("quick", [True, False])
def test_every_run_of_the_ndp_reproductions_is_a_valid_spec(name, quick):
    runs = repro.get(name).build(quick).runs()
    assert runs
    for _, spec in runs:
        resolved = dcnsim.resolve(spec)
        assert resolved["transport"]["protocol"] in ("ndp", "dctcp", "phost", "dcqcn", "mptcp")


def test_fig22_slows_one_direction_and_compares_penalties_at_the_papers_window():
    runs = [dcnsim.resolve(spec) for _, spec in repro.get("ndp-fig22").build(False).runs()]
    (override,) = {str(s["topology"]["link_overrides"]) for s in runs}
    assert "'one_way': True" in override and "'rate_gbps': 1.0" in override and "'b': 'agg0_0'" in override
    ndp = [(s["transport"]["initial_window_packets"], s["transport"]["path_penalty"])
           for s in runs if s["transport"]["protocol"] == "ndp"]
    assert sorted(ndp) == [(15, False), (15, True), (23, False), (23, True)]
    assert all(s["measure"]["warmup_us"] == 100000.0 and s["duration_us"] == 200000.0 for s in runs)


def test_incast_flows_are_whole_ndp_paper_packets():
    # The paper counts sizes in 9 KB packets; a short last packet costs a full pull slot.
    from dcnsim.repro.common import ndp_packets

    for name in ["ndp-fig4", "ndp-fig16", "ndp-fig20"]:
        for _, spec in repro.get(name).build(True).runs():
            size = dcnsim.resolve(spec)["workload"][0]["size_bytes"]
            assert size % ndp_packets(1) == 0, (name, size)


def test_the_preferred_sender_of_ndp_prio_is_one_of_its_incasts_senders():
    for quick in (True, False):
        for _, spec in repro.get("ndp-prio").build(quick).runs():
            r = dcnsim.resolve(spec)
            senders = {f[0] for f in r["workload"][0]["flows"]}
            assert len(senders) == len(r["workload"][0]["flows"])
            assert r["transport"]["prioritize_senders"] == [r["workload"][0]["flows"][0][0]]


def test_fig23_runs_the_papers_oversubscribed_tree_and_web_flows_in_closed_loops():
    # 512 hosts: k = 8 with 16 hosts per ToR (4:1); C = 5 and 10 connections per host, each a
    # closed loop to random hosts with a fixed 1 ms gap after each flow and the web-server sizes
    # as the NDP authors' driver draws them (ten deciles, equally likely: mean 112,225 bytes).
    from dcnsim.repro import ndp_fig23

    runs = [dcnsim.resolve(s) for _, s in repro.get("ndp-fig23").build(True).runs()]
    assert {r["transport"]["protocol"] for r in runs} == {"ndp", "dctcp"} and len(runs) == 4
    assert sorted(r["workload"][0]["connections"] for r in runs) == [5, 5, 10, 10]
    for r in runs:
        topo, w = r["topology"], r["workload"][0]
        assert (topo["k"], topo["oversubscription"]) == (8, 4) and ndp_fig23.HOSTS == 512
        assert w["kind"] == "closed_loop" and w["sources"] == list(range(512)) and "receiver" not in w
        assert w["cdf"] == "fb_webserver_ndp" and w["think_distribution"] == "fixed"
        assert w["think_us"] == 1000.0
    # The shipped CDF is the driver's CDF_WEB, each size with probability 1/10 (its declared mean is
    # checked against the analytic one by the Rust CDF tests).
    from pathlib import Path

    cdf = Path(__file__).resolve().parents[2] / "crates/dcnsim-core/data/workloads/fb_webserver_ndp.cdf"
    points = [tuple(map(float, line.split())) for line in cdf.read_text().splitlines() if not line.startswith("#")]
    assert points == [(x, (i + 1) / 10) for i, x in enumerate([250, 500, 1000, 1500, 2000, 3000, 4000, 10_000,
                                                                100_000, 1_000_000])]
    assert "mean_bytes=112225.0" in cdf.read_text()
    # The authors' driver runs 201 ms; a closed loop never drains, so only flows started before the
    # middle of the run are counted (a p99 over later ones would measure the run's end).
    full = [dcnsim.resolve(s) for _, s in repro.get("ndp-fig23").build(False).runs()]
    assert {r["duration_us"] for r in full} == {201000.0} and ndp_fig23.COUNTED_UNTIL == 0.5


def test_fig19_runs_dcqcn_lossless_with_200_buffers_per_port_shared():
    for quick, k in [(True, 8), (False, 12)]:
        runs = {r["transport"]["protocol"]: r for r in map(dcnsim.resolve, (s for _, s in
                                                                            repro.get("ndp-fig19").build(quick).runs()))}
        d = runs["dcqcn"]
        assert d["switch"]["pfc"] and d["switch"]["buffer_bytes"] == 200 * k * 9000
        assert d["queue"]["ecn_k_packets"] == 20 and d["routing"]["load_balancing"] == "ecmp"
        assert not runs["ndp"]["switch"].get("pfc", False)


def test_fig2_runs_line_rate_senders_into_cp_and_ndp_switches():
    # N flows into one port of a single switch, each sender's first window its whole flow; CP is
    # one FIFO cutting payloads above 8 packets (16 in all), NDP the paper's switch.
    from dcnsim.repro import ndp_fig2

    runs = [dcnsim.resolve(s) for _, s in repro.get("ndp-fig2").build(True).runs()]
    assert len(runs) == 6 and {r["transport"]["protocol"] for r in runs} == {"ndp"}
    for r in runs:
        flows = r["workload"][0]["flows"]
        assert r["topology"]["hosts"] == len(flows) + 1 and {f[1] for f in flows} == {0}
        assert r["transport"]["initial_window_packets"] == ndp_fig2.PACKETS
    cp = [r for r in runs if r["queue"]["priorities"] == 1]
    assert len(cp) == 3 and all(r["queue"]["trim_mode"] == "cut_payload" and not r["queue"]["bounce"] for r in cp)
    # The law: all of the link at one flow, none once N headers per packet time fill it.
    assert ndp_fig2.collapse_law(1) == 1.0 and ndp_fig2.collapse_law(9000 // 64 + 1) == 0.0
