"""The `rdma-pfc` reproduction runs and passes its checks: a lossless incast under PFC with pauses
reaching every sender's NIC and a head-of-line-blocked victim, and DCQCN removing most pauses."""

from dcnsim.cli import main


def test_rdma_pfc_passes_its_checks(tmp_path, capsys):
    assert main(["repro", "rdma-pfc", "--check", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "4 of 4 checks within the paper's tolerance" in text
