"""`xpass-fig21` (quick): going from 10 to 40 Gb/s, ExpressPass's large flows speed up within the
paper's 1.5x - 3.5x and far more than its short ones, DCTCP's XL flows about 2.8x and its M flows
under 2x, and ExpressPass's short flows gain more than DCTCP's on web search. The 40 Gb/s runs scale
the queues (and DCTCP's K and window cap) by four and halve DCTCP's g."""

from dcnsim.cli import main
from dcnsim.repro import xpass_fabric, xpass_fig21

PASSING = ("ExpressPass speed-up, web search L", "ExpressPass speed-up XL / S", "DCTCP speed-up, web search XL",
           "DCTCP speed-up, web search M", "ExpressPass / DCTCP speed-up, web search S")


def test_xpass_fig21_speedups(tmp_path, capsys):
    main(["repro", "xpass-fig21", "--quick", "--check", "--out", str(tmp_path / "r")])
    text = capsys.readouterr().out
    for check in PASSING:
        line = next(ln for ln in text.splitlines() if ln.startswith(check))
        assert line.rstrip().endswith("ok"), line


def test_40g_tables_scale_queues_and_dctcp_threshold():
    # DCTCP's switch queues and K count bytes (ns-2's RED), its NIC packets; g halves at 40 Gb/s.
    slow = xpass_fabric.protocol_tables("dctcp")
    fast = xpass_fig21.at_speed(slow, 40.0)
    assert fast["queue"]["limit_bytes"] == 4 * slow["queue"]["limit_bytes"] == 1000 * 1538
    assert fast["queue"]["ecn_k_bytes"] == 4 * slow["queue"]["ecn_k_bytes"] == 260 * 1538
    assert fast["queue"]["nic"]["limit_packets"] == 4 * slow["queue"]["nic"]["limit_packets"]
    assert fast["transport"]["max_window_packets"] == 4 * slow["transport"]["max_window_packets"]
    assert (slow["transport"]["g"], fast["transport"]["g"]) == (1 / 16, 1 / 32)
    assert slow["queue"]["limit_bytes"] == 250 * 1538  # the 10 Gb/s tables are left as they were


def test_40g_tables_scale_byte_limited_queues():
    """ExpressPass's queues are limited in bytes: 250 MTUs become the paper's 1,000 at 40 Gb/s too."""
    slow = xpass_fabric.protocol_tables("expresspass")
    fast = xpass_fig21.at_speed(slow, 40.0)
    assert fast["queue"]["limit_bytes"] == 4 * slow["queue"]["limit_bytes"] == 1000 * 1538
    assert fast["queue"]["nic"]["limit_bytes"] == 4 * slow["queue"]["nic"]["limit_bytes"]
    assert slow["queue"]["limit_bytes"] == 250 * 1538
