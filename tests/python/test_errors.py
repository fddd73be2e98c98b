"""Bad input: every malformed spec raises dcnsim.SpecError naming the field, never a traceback."""

import copy

import pytest

import dcnsim


def edit(spec, path, value=None, delete=False):
    """A copy of spec with `path` (dotted; `name[0]` indexes a list) set to value, or deleted."""
    s = copy.deepcopy(spec)
    cur = s
    parts = path.split(".")
    for p in parts[:-1]:
        cur = cur[p[:-3]][0] if p.endswith("[0]") else cur.setdefault(p, {})
    if delete:
        del cur[parts[-1]]
    else:
        cur[parts[-1]] = value
    return s


CASES = [
    ("unknown key", "topology.rakcs", 2, False, "topology.rakcs"),
    ("negative load", "workload[0].load", -0.5, False, "workload[0].load"),
    ("load above 1", "workload[0].load", 3.0, False, "workload[0].load"),
    ("wrong type", "topology.racks", "two", False, "topology.racks"),
    ("unknown protocol", "transport.protocol", "tcp-cubic", False, "transport.protocol"),
    ("missing required key", "duration_us", None, True, "duration_us"),
    ("unknown cdf", "workload[0].cdf", "nope", False, "workload[0].cdf"),
    ("negative duration", "duration_us", -1.0, False, "duration_us"),
]


@pytest.mark.parametrize("what,path,value,delete,field", CASES, ids=[c[0] for c in CASES])
def test_malformed_spec_names_the_field(small_spec, what, path, value, delete, field):
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run(edit(small_spec, path, value, delete))
    assert e.value.field == field, str(e.value)
    assert e.value.message


def test_odd_fat_tree_k(small_spec):
    s = copy.deepcopy(small_spec)
    s["topology"] = {"kind": "fat_tree", "k": 5, "host_rate_gbps": 10.0}
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run(s)
    assert e.value.field == "topology.k" and "even" in e.value.message


def test_non_monotone_cdf_file(tmp_path, small_spec):
    bad = tmp_path / "bad.cdf"
    bad.write_text("100 0.5\n200 0.3\n300 1\n")
    s = copy.deepcopy(small_spec)
    s["workload"][0]["cdf"] = str(bad)
    s["workload"][0]["interpolation"] = "linear"
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.run(s)
    assert e.value.field == "workload[0].cdf" and "monotone" in e.value.message


def test_bad_toml_text_is_a_spec_error():
    with pytest.raises(dcnsim.SpecError):
        dcnsim.run("duration_us = = 3\n")


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        dcnsim.run("/nonexistent/spec.toml")
