"""The ExpressPass reproductions run: `xpass-fabric` (quick) passes its checks (bounded ExpressPass
queues, DCTCP's far larger, credit waste as Fig. 20), and `xpass-fig17` (quick) finishes every flow
with ExpressPass's FCTs in a narrow band and its median close to DCTCP's (its quick checks). The compared protocols
include RCP, DX and HULL exactly when this build registers them."""

import dcnsim
from dcnsim.cli import main
from dcnsim.repro import xpass_fabric


def test_xpass_fabric_passes_its_checks(tmp_path, capsys):
    assert main(["repro", "xpass-fabric", "--quick", "--check", "--out", str(tmp_path / "r")]) == 0
    assert "4 of 4 checks within their accepted range" in capsys.readouterr().out


def test_xpass_fig17_median_and_band(tmp_path, capsys):
    # The tail checks (DCTCP's 200 ms timeouts) are made on the paper-sized shuffle only.
    assert main(["repro", "xpass-fig17", "--quick", "--check", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "2 of 2 checks within their accepted range" in text
    for check in ("median FCT, ExpressPass / DCTCP", "ExpressPass max / median FCT"):
        line = next(ln for ln in text.splitlines() if ln.startswith(check))
        assert line.rstrip().endswith("ok"), line


def test_optional_protocols_follow_the_registry():
    have = {p["name"] for p in dcnsim.describe()["protocols"]}
    got = xpass_fabric.protocols()
    assert got[:2] == ["expresspass", "dctcp"]
    assert set(got[2:]) == {p for p in xpass_fabric.OPTIONAL if p in have}


def test_xpass_fig18_passes_its_checks(tmp_path, capsys):
    assert main(["repro", "xpass-fig18", "--quick", "--check", "--out", str(tmp_path / "r")]) == 0
    assert "2 of 2 checks within their accepted range" in capsys.readouterr().out


def test_the_window_baselines_open_connections_as_ns2_fulltcp_and_the_others_do_not():
    # ns-2's FullTcp (the authors' DCTCP, DX and HULL) spends a SYN round trip before data, resends
    # a lost SYN after 200 ms (their `rtxcur_init_ 0.001` raised to ns-2's `minrto_`) and writes the
    # FCT at the sender's last ACK; ExpressPass and RCP have no such set-up.
    for p in ("dctcp", "dx", "hull"):
        t = xpass_fabric.protocol_tables(p)["transport"]
        assert (t["connection_setup"], t["initial_rto_us"], t["fct_end"]) == ("handshake", 2e5, "last_ack"), p
    for p in ("expresspass", "rcp"):
        assert "connection_setup" not in xpass_fabric.protocol_tables(p)["transport"], p
