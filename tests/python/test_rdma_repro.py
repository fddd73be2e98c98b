"""The `rdma-pfc` reproduction runs and passes its checks: a lossless incast under PFC with pauses
reaching every sender's NIC and a head-of-line-blocked victim, and DCQCN removing most pauses. The
`hpcc-paper` fabric is the reference's; `rdma-convergence` measures convergence as it says."""

from dcnsim.cli import main


def test_rdma_pfc_passes_its_checks(tmp_path, capsys):
    assert main(["repro", "rdma-pfc", "--check", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "4 of 4 checks within their accepted range" in text


def test_the_hpcc_paper_fabric_is_the_reference_fat_txt():
    # The ns-3 mix/fat.txt: 320 hosts at 100 Gb/s, 56 switches (20 ToR, 20 aggregation, 16 core),
    # 160 fabric links at 400 Gb/s, each switch port carrying one link.
    import dcnsim
    from dcnsim.repro import hpcc_paper

    spec = {"seed": 1, "duration_us": 50.0, "topology": hpcc_paper.fabric(quick=False), "setup": "hpcc-paper",
            "workload": [{"kind": "flow_list", "flows": [[0, 319, 1000, 0.0]]}]}
    r = dcnsim.run(spec)
    assert r.summary["hosts"] == 320
    assert len(r.switches) == 56
    fabric = r.queues[r.queues["role"] == "fabric"]
    assert len(fabric) == 2 * 160 and (fabric["rate_gbps"] == 400.0).all()  # a fabric link is two ports
    assert (r.queues.loc[r.queues["role"] != "fabric", "rate_gbps"] == 100.0).all()
    assert r.switches["tier"].value_counts().to_dict() == {"edge": 20, "aggregation": 20, "core": 16}
    assert r.flows["fct_us"].iloc[0] > 0  # the 6-hop path from host 0 to host 319 works


def test_convergence_time_is_when_both_rates_stay_within_the_tolerance_of_their_mean():
    from dcnsim.repro import rdma_convergence as c

    t = [c.JOIN_US + 2.0 * i for i in range(100)]
    first = [90.0] * 10 + [50.0] * 19 + [58.0] + [51.0] * 70
    second = [10.0] * 10 + [45.0] * 19 + [42.0] + [49.0] * 70
    # |58 - 42| / 100 = 0.16 at sample 29 is the last excursion beyond 10%; 50/45 (0.053) is within.
    assert c._split_settled(t, first, t, second) == (t[29] + c.SAMPLE_US) - c.JOIN_US
    assert c._split_settled(t, [50.0] * 100, t, [48.0] * 100) == 0.0
    assert c._split_settled(t, [50.0] * 100, t, [48.0] * 99 + [30.0]) == float("inf")  # still outside at the end
    # Only common sample times count; before the join nothing counts.
    assert c._split_settled([0.0] + t, [1.0] + [50.0] * 100, t, [50.0] * 100) == 0.0
