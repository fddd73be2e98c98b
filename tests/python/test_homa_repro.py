"""Homa in the Python layer: the homa-paper reproduction's run is the Homa simulator's set-up, the SIRD
evaluation's setups run Homa with the SIRD paper's parameters and DCTCP and Swift over connection
pools, and the comparison skips protocols this build lacks."""

import dcnsim
from dcnsim import repro, setups
from dcnsim.repro import homa_paper
from dcnsim.repro import sird_common as sc


def test_the_homa_paper_run_is_the_simulators_setup():
    runs = repro.get("homa-paper").build(True).runs()
    assert len(runs) == 1
    r = dcnsim.resolve(runs[0][1])
    t = r["transport"]
    assert (t["protocol"], t["rtt_bytes"], t["overcommitment"]) == ("homa", 10_000, 7)
    topo = r["topology"]
    assert (topo["racks"], topo["hosts_per_rack"], topo["spines"]) == (9, 16, 4)
    assert (topo["host_rate_gbps"], topo["core_rate_gbps"]) == (10.0, 40.0)
    assert r["queue"]["priorities"] == 8 and r["workload"][0]["load"] == 0.8
    assert r["workload"][0]["stop_us"] < r["duration_us"]
    assert homa_paper.EDGES[1] == homa_paper.RTT_BYTES


def test_the_sird_setups_run_homa_with_the_papers_parameters_and_pools_for_dctcp_and_swift():
    homa = setups.tables("homa-sird-paper")
    assert homa["transport"]["rtt_bytes"] == 100_000 and homa["transport"]["overcommitment"] == 7
    assert homa["queue"]["priorities"] == 8 and homa["routing"]["load_balancing"] == "spray"
    for name in ("dctcp-sird-paper", "swift-sird-paper"):
        t = setups.tables(name)
        assert t["transport"]["connection_pool"] == 40 and t["routing"]["load_balancing"] == "ecmp", name
        assert t["transport"]["initial_window_packets"] == 66, name
    assert sc.protocols() == [p for p in sc.SETUPS if p in {x["name"] for x in dcnsim.describe()["protocols"]}]
    assert {"homa", "swift", "dctcp", "sird"} <= set(sc.protocols())


def test_pooled_dctcp_runs_a_small_cell(tmp_path):
    spec = {**sc.cell_spec("WKb", "balanced", 0.5, quick=True), **sc.dctcp_setup(), "duration_us": 300.0,
            "measure": {"warmup_us": 50.0},
            "topology": {**sc.fabric("balanced"), "racks": 2, "hosts_per_rack": 4}}
    out = dcnsim.run(spec)
    assert out.summary["flows"]["finished"] > 0
    assert dcnsim.resolve(spec)["transport"]["connection_pool"] == 40
