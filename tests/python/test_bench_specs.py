"""Every bench spec is a valid spec: a renamed or mistyped key in bench/ must fail here, not only
when someone next runs the benchmarks."""

from pathlib import Path

import pytest

import dcnsim

BENCH = Path(__file__).resolve().parents[2] / "bench"
SPECS = sorted(BENCH.rglob("*.toml"))


def test_bench_specs_exist():
    assert len(SPECS) >= 10, SPECS


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(BENCH)))
def test_bench_spec_resolves(path):
    resolved = dcnsim.resolve(dcnsim.load_spec(path))
    assert resolved["duration_us"] > 0


def test_htsim_matched_benches_keep_htsim_settings():
    for hosts in (128, 432):
        r = dcnsim.resolve(dcnsim.load_spec(BENCH / f"ndp_htsim_matched_{hosts}.toml"))
        assert r["net"]["mtu_bytes"] == 9064 and r["queue"]["limit_bytes"] == 72000
        assert r["queue"]["scheduling"] == "strict" and r["queue"]["bounce"] is False
        assert r["queue"]["header_limit_bytes"] == 144000
        assert r["transport"]["path_penalty"] is False
