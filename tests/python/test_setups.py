"""Named protocol setups: usable from a spec and as a sweep axis, expanded into the resolved spec,
shared with the reproductions."""

import copy

import pytest

import dcnsim
from dcnsim import repro, setups
from dcnsim.repro import sird_common
from dcnsim.sweep import SweepSpec

BASE = {
    "seed": 1, "duration_us": 300.0,
    "topology": {"kind": "fat_tree", "k": 4, "host_rate_gbps": 10.0},
    "workload": [{"kind": "permutation", "size_bytes": 100_000}],
}


@pytest.mark.parametrize("name", setups.names())
def test_every_setup_resolves_and_the_resolved_spec_holds_its_tables(name):
    r = dcnsim.resolve(dict(BASE, setup=name))
    for key, table in setups.SETUPS[name].tables.items():
        for k, v in table.items():
            got = r[key][k]
            assert (got == v) if not isinstance(v, dict) else all(got[x] == y for x, y in v.items()), (key, k)
    assert "setup" not in r


def test_the_specs_own_keys_are_merged_over_the_setup():
    r = dcnsim.resolve(dict(BASE, setup="ndp-paper", transport={"initial_window_packets": 15},
                            queue={"limit_packets": 12}))
    assert r["transport"]["protocol"] == "ndp" and r["transport"]["initial_window_packets"] == 15
    assert r["queue"]["limit_packets"] == 12 and r["queue"]["trim"] is True  # the rest of the setup stays
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.resolve(dict(BASE, setup="ndp-paper", transport={"protocol": "dctcp"}))
    assert e.value.field == "transport.protocol" and "contradicts setup" in e.value.message


@pytest.mark.parametrize("value,fragment", [("sird", "unknown setup \"sird\"; known: ndp-paper"), (3, "a string")])
def test_an_unknown_setup_names_the_field_and_the_known_ones(value, fragment):
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.resolve(dict(BASE, setup=value))
    assert e.value.field == "setup" and fragment in e.value.message
    if isinstance(value, str):
        assert all(n in e.value.message for n in setups.names())


def test_a_setup_axis_compares_protocols(tmp_path):
    sweep = tmp_path / "cmp.toml"
    sweep.write_text('name = "cmp"\n[base]\nduration_us = 300.0\n[base.topology]\nkind = "fat_tree"\nk = 4\n'
                     'host_rate_gbps = 10.0\n[[base.workload]]\nkind = "permutation"\nsize_bytes = 100000\n'
                     '[axes]\nsetup = ["dctcp-ndp-paper", "ndp-paper"]\n')
    df = dcnsim.sweep(BASE, {"setup": ["dctcp-ndp-paper", "ndp-paper"]}, out=tmp_path / "out", workers=1, quiet=True)
    assert list(df["setup"]) == ["dctcp-ndp-paper", "ndp-paper"] and list(df["protocol"]) == ["dctcp", "ndp"]
    from dcnsim.cli import main

    assert main(["sweep", str(sweep), "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    assert list(dcnsim.results(tmp_path / "cli")["protocol"]) == ["dctcp", "ndp"]


def test_the_reproductions_use_the_setups():
    axes = repro.get("ndp-fig14").build(True).axes
    assert [s for s, _ in axes["setup,switch"]] == ["ndp-paper", "dctcp-ndp-paper", "phost-ndp-paper",
                                                 "dcqcn-ndp-paper", "mptcp-ndp-paper"]
    assert {s["setup"] for _, s in repro.get("sird-table5").build(True).runs()} == set(sird_common.SETUPS.values())
    specs = [dcnsim.resolve(s) for _, s in repro.get("ndp-fig16").build(True).runs()]
    assert {s["transport"]["protocol"] for s in specs} == {"ndp", "dctcp", "phost", "mptcp"}


def test_expansion_does_not_touch_the_callers_spec():
    spec = dict(BASE, setup="sird-paper")
    before = copy.deepcopy(spec)
    dcnsim.resolve(spec)
    assert spec == before
    assert SweepSpec(base=spec, axes={"seed": [1]}).runs()[0][1]["setup"] == "sird-paper"


@pytest.mark.parametrize("name", ["dcqcn-hpcc-paper", "timely-hpcc-paper"])
def test_lossless_rdma_setups_never_time_out_behind_pfc(name):
    # The reference NIC has no retransmission timer. In hpcc-paper's quick incast cell (PFC, megabytes
    # of queue), IRN's 100/320 us timeouts fire with nothing lost and resend whole windows.
    from dcnsim.repro import hpcc_paper

    spec = {"seed": 1, "duration_us": 1500.0, "setup": name, "topology": hpcc_paper.fabric(True),
            "workload": hpcc_paper.workload("fb_hadoop", 0.3, True, True)}
    s = dcnsim.run(spec).summary
    assert s["queues"]["drops"] == 0 and s["packets"]["dropped"] == 0
    assert s["transport"]["timeouts"] == 0 and s["transport"]["retransmitted_packets"] == 0, s["transport"]
    spec["transport"] = {"timeout_us": 320.0, "short_timeout_us": 100.0}
    irn = dcnsim.run(spec).summary
    assert irn["queues"]["drops"] == 0 and irn["transport"]["timeouts"] > 0, irn["transport"]


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _expand_as_python_did(spec: dict) -> dict:
    """The expansion dcnsim.setups did before the core read the setups: the spec's own tables
    merged over the setup's, key by key."""
    spec = dict(spec)
    setup = setups.get(spec.pop("setup"))
    for key, table in setup.tables.items():
        own = spec.get(key)
        spec[key] = copy.deepcopy(table) if own is None else _merge(copy.deepcopy(table), own)
    return spec


@pytest.mark.parametrize("name", setups.names())
def test_the_core_expands_every_setup_as_the_python_expansion_did(name):
    own = {"queue": {"fabric": {"priorities": 3}}, "net": {"switch_latency_us": 0.5}, "transport": {"g": 0.5}}
    spec = dict(BASE, setup=name, **own)
    try:
        expected = dcnsim.resolve(_expand_as_python_did(spec))
    except dcnsim.SpecError as e:
        expected = str(e)
    try:
        got = dcnsim.resolve(spec)
    except dcnsim.SpecError as e:
        got = str(e)
    assert got == expected


def test_describe_lists_the_keys_each_setup_sets():
    d = {s["name"]: s for s in dcnsim.describe()["setups"]}
    assert list(d) == setups.names()
    assert "queue.trim" in d["ndp-paper"]["keys"] and "transport.protocol" in d["ndp-paper"]["keys"]
    assert d["sird-paper"]["tables"]["transport"] == {"bdp_bytes": 100_000, "protocol": "sird"}
