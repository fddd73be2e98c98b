"""The PB-FS reproductions: every variant builds on the paper's fabric (320 hosts, or 128 in the quick
variant), and Fig. 6's quick variant (three lossless runs with PB-FS on) passes its checks: fewer than
four postcards per eligible flow, most of them from ToR switches."""

from dcnsim import resolve
from dcnsim.cli import main
from dcnsim.repro import get


def test_pbfs_fabric_has_the_papers_switches():
    for name in ("pbfs-fig5", "pbfs-fig6", "pbfs-fig7", "pbfs-fig8", "pbfs-incast"):
        for quick, hosts in ((True, 128), (False, 320)):
            runs = list(get(name).build(quick).runs())
            assert runs, name
            topo = runs[0][1]["topology"]
            assert (topo["k"], topo["pods"], topo["oversubscription"]) == (8, 2 if quick else 5, 4)
            assert topo["pods"] * 4 * 16 == hosts
            assert all(s["switch"]["postcards"] for _, s in runs), name
            resolve(runs[0][1])
            # The paper's thresholds (11% / 33% of the free buffer) for the lossless fabric's PAUSE and
            # the lossy one's drops alike; 1000-byte payloads.
            sw, net = runs[0][1]["switch"], runs[0][1]["net"]
            assert sw["buffer_alpha_by_rate"] == [[25.0, 0.11], [100.0, 0.33]]
            assert net["mtu_bytes"] - net["header_bytes"] == 1000


def test_pbfs_fig6_quick_passes_its_checks(tmp_path, capsys):
    assert main(["repro", "pbfs-fig6", "--quick", "--check", "--quiet", "--workers", "1",
                 "--out", str(tmp_path / "o")]) == 0
    assert "5 of 5 checks within their accepted range" in capsys.readouterr().out


def test_pbfs_incast_quick_keeps_the_receiver_busy_with_no_spurious_retransmission():
    # 100 x 100 KB into one 25 Gb/s host on the lossless fabric, DCQCN with PB-FS. PFC loses
    # nothing, so a retransmission is spurious; with IRN's 100 / 320 us timeouts behind the
    # incast's millisecond queues they resent 142% more data and the incast ended 55% late.
    import dcnsim

    runs = [s for _, s in get("pbfs-incast").build(True).runs()
            if s["workload"][0]["size_bytes"] == 100_000 and s["transport"]["protocol"] == "dcqcn"
            and s["transport"]["fast_start"] == "pbfs"]
    assert len(runs) == 1
    r = dcnsim.run(runs[0])
    t = r.summary["transport"]
    assert t["pbfs_rate_reductions"] > 100, t
    assert (t["timeouts"], t["retransmitted_packets"]) == (0, 0), t
    # Ideal: the 100 x 100 packets of 1048 wire bytes back to back on the receiver's link.
    ideal_us = 100 * 100 * 1048 * 8 / 25e3
    assert r.flows["fct_ps"].notna().all()
    assert r.flows["fct_ps"].max() / 1e6 < 1.02 * ideal_us


def test_pbfs_fig7_runs_both_buffer_sizes_and_counts_loss_in_the_window():
    from dcnsim.repro import pbfs_fig7 as f7

    runs = list(get("pbfs-fig7").build(True).runs())
    got = sorted((s["switch"]["buffer_bytes"], s["transport"]["fast_start"]) for _, s in runs)
    assert got == sorted((b, st) for b in (2_000_000, 8_000_000) for st in ("slow_start", "line_rate", "pbfs"))
    # Loss counts the measurement window (the ramp before it loses almost nothing), not the whole run.
    s = {"queues": {"drops": 100}, "transport": {"data_packets_sent": 2000, "retransmitted_packets": 9},
         "window_counts": {"drops": 90, "transport": {"data_packets_sent": 900, "retransmitted_packets": 5}}}
    assert f7._counts(s) == (90, 900, 5)
    del s["window_counts"]
    assert f7._counts(s) == (100, 2000, 9)


def test_pbfs_timing_finds_each_postcard_and_its_trigger_in_a_trace():
    # 8 x 100 KB into host 0 of one 25 Gb/s switch (links of 1 us), rate DCTCP with PB-FS, every flow
    # traced. pbfs-timing's trace analysis must find every postcard the senders counted, each sent by the
    # switch at the arrival of a PBT-triggering packet (PSN 5, 11, ...: Delta = 6) and delivered one link
    # later (1 us plus a 64-byte control packet at 25 Gb/s, 0.02 us).
    import dcnsim
    from dcnsim.repro import pbfs_timing as pt

    spec = {"seed": 1, "duration_us": 400.0, "net": {"mtu_bytes": 1048, "header_bytes": 48, "control_bytes": 64},
            "topology": {"kind": "single_switch", "hosts": 9, "host_rate_gbps": 25.0, "host_delay_us": 1.0},
            "queue": {"priorities": 2, "ecn": "step", "ecn_k_bytes": 75_000},
            "switch": {"postcards": True},
            "transport": {"protocol": "dctcp_rate", "fast_start": "pbfs", "data_priority": 1, "control_priority": 0},
            "workload": [{"kind": "flow_list", "flows": [[h, 0, 100_000, 0.0] for h in range(1, 9)]}],
            "trace": {"flows": list(range(8))}}
    r = dcnsim.run(spec)
    p = pt.postcards(r.trace, r.flows)
    assert len(p) == r.summary["transport"]["postcards_received"] > 0
    assert set(p["node"]) == {"switch0"} and (p["psn"] % 6 == 5).all()
    one_way = 1.0 + 64 * 8 / 25e3
    assert ((p["one_way_us"] - one_way).abs() < 1e-6).all(), p["one_way_us"].describe()
    # From the NIC's first send of the triggering packet: its serialization and link, then the postcard.
    assert ((p["loop_us"] - (1048 * 8 / 25e3 + 1.0 + one_way)).abs() < 1e-6).all(), p["loop_us"].describe()
