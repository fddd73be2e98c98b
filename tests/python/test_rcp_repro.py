"""The `rcp-convergence` reproduction runs and passes its checks: a second flow joins at the full
advertised rate, and the two converge to equal shares in tens of RTTs (Dart's section VI-D)."""

from dcnsim.cli import main


def test_rcp_convergence_passes_its_checks(tmp_path, capsys):
    assert main(["repro", "rcp-convergence", "--quick", "--check", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "3 of 3 checks within their accepted range" in text
