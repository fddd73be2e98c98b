"""Randomized spec mutations through the command line's path (a TOML file, --set overrides, the
spec checker): each ends in a resolved spec or a SpecError naming a field, never another exception
or a panic. A sample of the valid ones is simulated with short durations.

Fixed seed and 10,000 cases by default; a long run: DCNSIM_FUZZ_CASES=200000 DCNSIM_FUZZ_SEED=7."""

import copy
import decimal
import json
import os
import random

import numpy as np
import pytest

import dcnsim
from dcnsim.cli import apply_sets, build_spec

CASES = int(os.environ.get("DCNSIM_FUZZ_CASES", "10000"))
SEED = int(os.environ.get("DCNSIM_FUZZ_SEED", "11"))
SIMULATED = int(os.environ.get("DCNSIM_FUZZ_SIMULATED", "25"))

BASES = [
    {"seed": 1, "duration_us": 200.0, "measure": {"warmup_us": 20.0},
     "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
     "queue": {"limit_packets": 50, "ecn": "step", "ecn_k_packets": 10},
     "transport": {"protocol": "dctcp"},
     "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}]},
    {"seed": 2, "duration_us": 200.0, "setup": "ndp-paper",
     "topology": {"kind": "fat_tree", "k": 4, "host_rate_gbps": 10.0},
     "workload": [{"kind": "permutation", "size_bytes": 20000},
                  {"kind": "incast", "senders": 3, "size_bytes": 9000, "at_us": 5.0}]},
    {"seed": 3, "duration_us": 200.0, "setup": "sird-paper",
     "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 3, "spines": 2, "host_rate_gbps": 100.0,
                  "core_rate_gbps": 100.0},
     "workload": [{"kind": "flow_list", "flows": [[0, 3, 50000, 0.0], [1, 4, 2000, 1.5]]},
                  {"kind": "closed_loop", "sources": [2, 5], "receiver": 0, "size_bytes": 3000}]},
    {"seed": 4, "duration_us": 200.0, "metrics": {"sample_interval_us": 20.0},
     "topology": {"kind": "dumbbell", "hosts_per_side": 2, "host_rate_gbps": 10.0, "bottleneck_rate_gbps": 10.0},
     "transport": {"protocol": "newreno"}, "trace": {"flows": [0]},
     "workload": [{"kind": "incast", "senders": 2, "size_bytes": 5000, "load": 0.2}]},
    # The protocols and topologies added since: each as its paper runs it (named setups or the
    # switch features it needs), on a three-tier Clos, a ring and a fat tree with fewer pods.
    {"seed": 5, "duration_us": 200.0, "setup": "homa-sird-paper",
     "topology": {"kind": "three_tier", "pods": 2, "tors_per_pod": 2, "aggs_per_pod": 2, "cores_per_agg": 1,
                  "hosts_per_tor": 2, "host_rate_gbps": 100.0, "core_rate_gbps": 100.0},
     "workload": [{"kind": "poisson", "load": 0.4, "cdf": "websearch"}]},
    {"seed": 6, "duration_us": 200.0, "setup": "dcpim-paper",
     "topology": {"kind": "ring", "switches": 3, "hosts_per_switch": 2, "host_rate_gbps": 100.0,
                  "core_rate_gbps": 100.0},
     "workload": [{"kind": "permutation", "size_bytes": 30000}]},
    {"seed": 7, "duration_us": 200.0, "setup": "expresspass-paper",
     "topology": {"kind": "fat_tree", "k": 4, "pods": 2, "host_rate_gbps": 10.0,
                  "link_overrides": [{"a": "tor0_0", "b": "agg0_0", "rate_gbps": 5.0}]},
     "workload": [{"kind": "incast", "senders": 3, "size_bytes": 20000, "at_us": 2.0}]},
    {"seed": 8, "duration_us": 200.0, "setup": "hpcc-paper",
     "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 2, "spines": 2, "host_rate_gbps": 100.0,
                  "core_rate_gbps": 100.0},
     "workload": [{"kind": "flow_list", "flows": [[0, 2, 100000, 0.0], [1, 3, 5000, 1.0]]}]},
    {"seed": 9, "duration_us": 200.0,
     "topology": {"kind": "single_switch", "hosts": 4, "host_rate_gbps": 10.0},
     "queue": {"limit_packets": 50, "ecn": "step", "ecn_k_packets": 10, "priorities": 2},
     "switch": {"iofd": True, "iofd_threshold_bytes": 3000},
     "transport": {"protocol": "dart", "short_flow_priority": 0, "data_priority": 1},
     "workload": [{"kind": "poisson", "load": 0.5, "cdf": "fb_hadoop"}]},
    {"seed": 10, "duration_us": 200.0, "setup": "hull-paper",
     "topology": {"kind": "dumbbell", "hosts_per_side": 2, "host_rate_gbps": 10.0, "bottleneck_rate_gbps": 10.0},
     "queue": {"limit_packets": 100, "ecn": "step", "ecn_k_packets": 20},
     "workload": [{"kind": "permutation", "size_bytes": 50000}]},
    {"seed": 11, "duration_us": 200.0, "setup": "rcp-paper",
     "topology": {"kind": "single_switch", "hosts": 3, "host_rate_gbps": 10.0},
     "workload": [{"kind": "incast", "senders": 2, "size_bytes": 40000, "at_us": 0.0}]},
    {"seed": 12, "duration_us": 200.0, "setup": "dcqcn-hpcc-paper",
     "topology": {"kind": "fat_tree", "k": 4, "pods": 3, "host_rate_gbps": 100.0, "core_rate_gbps": 100.0},
     "transport": {"fast_start": "pbfs"}, "switch": {"postcards": True},
     "workload": [{"kind": "poisson", "load": 0.3, "cdf": "websearch"}]},
]
PROTOCOLS = ["dctcp", "newreno", "ndp", "phost", "sird", "swift", "dcqcn", "timely", "dctcp_rate", "hpcc", "rcp",
             "dx", "hull", "expresspass", "homa", "dcpim", "dart", "nosuch"]

VALUES = [0, 1, -1, 2, 3, 7, 2**31, 2**63, 2**64, 10**30, 0.0, -0.0, 0.5, -0.5, 1.5, 1e308, 1e-308,
          float("nan"), float("inf"), -float("inf"), True, False, None, "", "x", "nan", "ecmp", "fat_tree", "dctcp",
          "websearch", "a/b.cdf", [], [1], [1, 2, 3], [[0, 1, 10, 0]], {}, {"x": 1}, np.int64(4), np.float32(0.25),
          np.bool_(True), np.array([1, 2]), decimal.Decimal("0.5"), {1, 2}, b"ab", (1, 2), 1j]
SET_KEYS = ["seed", "seed.x", "workload[0].load", "workload[x].load", "workload[9].load", "workload[1]",
            "topology..k", "transport[0]", "queue.fabric.ecn_k_bytes", "setup", "a-b", "x[", "x]", "", " ",
            "workload[0].flows[0]", "transports.bulk.protocol", "trace.flows", "net.mtu_bytes", "transport.protocol",
            "transport.protocol", "switch.int", "switch.phantom_queue", "switch.rcp", "topology.pods"]
SET_VALUES = ["1", "-1", "0.5", "nan", "inf", "1e999", "'x'", '"ndp-paper"', "[1,", "[1, 2]", "{a = 1}", "true",
              "sird-paper", "", "[[0, 1, 5, 0]]", "999999999999999999999", *(f'"{p}"' for p in PROTOCOLS)]


TOML_LITERALS = ["nan", "inf", "-inf", "-1", "0", "1e999", "18446744073709551616", '""', '"x"', '"nan"', "[]", "{}",
                 "true", "[1, 2]", "{ a = 1 }", "1979-05-27", "0x10", "1_000", "[[0, 1, 5, 0]]", '"ndp-paper"',
                 "[1, \"a\"]", "0.0"]


def leaves(node, path=()):
    """Every (path, value) in a spec: paths are tuples of keys and list indices."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, path + (i,))


def parent(spec, path):
    cur = spec
    for p in path[:-1]:
        cur = cur[p]
    return cur


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return repr(v)


def to_toml(spec: dict, prefix: str = "") -> str:
    """A plain spec (scalars, arrays, tables, arrays of tables one level deep) as TOML text."""
    out = [f"{k} = {toml_value(v)}" for k, v in spec.items()
           if not isinstance(v, dict) and not (isinstance(v, list) and v and isinstance(v[0], dict))]
    for k, v in spec.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out += ["", f"[{name}]", to_toml(v, f"{name}.")]
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for item in v:
                out += ["", f"[[{name}]]", to_toml(item, f"{name}.")]
    return "\n".join(out)


def mutate_text(rng, text: str) -> str:
    """Line edits a hand-edited spec file goes through: values, typos, deletions, duplicates, junk."""
    lines = text.split("\n")
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        i = rng.randrange(len(lines))
        op = rng.random()
        if op < 0.45 and "=" in lines[i]:
            lines[i] = lines[i].split("=")[0] + "= " + rng.choice(TOML_LITERALS)
        elif op < 0.6:
            del lines[i]
        elif op < 0.7:
            lines.insert(i, lines[i])
        elif op < 0.8 and "=" in lines[i]:
            key = lines[i].split("=")[0].strip()
            lines[i] = key[:-1] + rng.choice("xz_") + lines[i][len(key):] if key else lines[i]
        elif op < 0.9:
            lines.insert(i, rng.choice(["setup = \"sird\"", "[extra]", "lod = 0.5", "[[workload]]", "= 1", "k ="]))
        else:
            cut = rng.randrange(len(text))
            return text[:cut]
        if not lines:
            return ""
    return "\n".join(lines)


def mutate_dict(rng, spec):
    """Edits a Python caller can make: any value (numpy, Decimal, sets, NaN, ...), deleted or unknown keys."""
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        paths = [p for p, _ in leaves(spec) if p]
        op = rng.random()
        if op < 0.6 and paths:
            path = rng.choice(paths)
            parent(spec, path)[path[-1]] = copy.deepcopy(rng.choice(VALUES))
        elif op < 0.8 and paths:
            path = rng.choice(paths)
            parent(spec, path).pop(path[-1])
        else:
            table = rng.choice([spec] + [v for _, v in leaves(spec) if isinstance(v, dict)])
            table[rng.choice(["kind", "lod", "protocol", "extra", "k", "load", "flows", "path", "setup"])] = \
                copy.deepcopy(rng.choice(VALUES))


def random_sets(rng, params) -> list:
    sets = []
    for _ in range(rng.choice([0, 0, 1, 2])):
        if rng.random() < 0.8:
            # A documented parameter (e.g. queue.ecn_k_packets), with a list index or a table name filled in.
            key = rng.choice(params).replace("[]", f"[{rng.randint(0, 2)}]").replace("<name>", "bulk")
        else:
            key = rng.choice(SET_KEYS)
        sets.append(f"{key}={rng.choice(SET_VALUES)}")
    return sets


def check_case(rng, case, spec_file, params):
    """One case through the command line's path (a TOML file, then --set items) or the Python API's
    (a dict, then the same --set items). Returns ("ok", resolved, spec) or ("error", SpecError, None)."""
    base = copy.deepcopy(BASES[case % len(BASES)])
    sets = random_sets(rng, params)
    try:
        if (case // len(BASES)) % 2 == 0:  # every base goes through both paths
            spec_file.write_text(mutate_text(rng, to_toml(base)))
            spec = build_spec(spec_file, sets)
        else:
            mutate_dict(rng, base)
            spec = apply_sets(base, sets)
        return "ok", dcnsim.resolve(spec), spec
    except dcnsim.SpecError as e:
        assert e.field and e.field != "(root)" and e.message, f"case {case}: an error that names no field: {e!r}"
        assert "\n" not in str(e), f"case {case}: a multi-line error: {e}"
        return "error", e, None


def small(resolved) -> bool:
    """Cheap enough to simulate: a few dozen hosts at most, no giant flows or queues."""
    numbers = [v for _, v in leaves(resolved) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    t = resolved["topology"]
    hosts = t.get("hosts", 0) + 2 * t.get("hosts_per_side", 0) + t.get("racks", 0) * t.get("hosts_per_rack", 0) \
        + (t.get("k", 0) ** 3) // 4 + t.get("switches", 0) * t.get("hosts_per_switch", 0) \
        + t.get("pods", 0) * t.get("tors_per_pod", 0) * t.get("hosts_per_tor", 0)
    return hosts <= 64 and all(abs(v) < 1e12 for v in numbers)


def test_mutated_specs_end_in_a_result_or_an_error_naming_a_field(tmp_path):
    rng = random.Random(SEED)
    params = [p["path"] for p in dcnsim.describe()["params"]]
    spec_file = tmp_path / "spec.toml"
    failures, outcomes, runnable = [], {"ok": 0, "error": 0}, []
    for case in range(CASES):
        try:
            kind, value, spec = check_case(rng, case, spec_file, params)
        except Exception as e:  # a traceback a user would see: the defect this test looks for
            failures.append(f"case {case}: {type(e).__name__}: {e}")
            continue
        outcomes[kind] += 1
        if kind == "ok" and small(value):
            runnable.append((case, spec))
    assert not failures, f"{len(failures)} of {CASES} cases raised (seed {SEED}):\n" + "\n".join(failures[:5])
    # Both outcomes are common: the mutations are neither all harmless nor all fatal.
    assert outcomes["ok"] > CASES // 20 and outcomes["error"] > CASES // 3, outcomes
    for case, spec in rng.sample(runnable, min(SIMULATED, len(runnable))):
        spec["duration_us"] = 100.0
        try:
            r = dcnsim.run(spec)
        except dcnsim.SpecError as e:  # found only when the run is built (e.g. a host id the topology lacks)
            assert e.field and e.field != "(root)", f"case {case}: {e!r}"
            continue
        p = r.summary["packets"]
        assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"], f"case {case}: {spec!r}"


@pytest.mark.parametrize("text", ["seed = \n", "seed = 1\nseed = 2\n", "[topology\n", "duration_us = 1e999\n",
                                  "\x00\x01", "a = 'unterminated\n", "x = [1, {]\n"])
def test_broken_toml_names_the_file(tmp_path, text):
    f = tmp_path / "s.toml"
    f.write_text(text)
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.resolve(build_spec(f, []))
    assert e.value.field in (str(f), "duration_us", "topology", "workload", "x")


# Hostile values: each through the TOML path and the dict path, ending in a SpecError naming where.

DEEP = 100_000


def _deep_list():
    value = []
    for _ in range(DEEP):
        value = [value]
    return value


@pytest.mark.parametrize("base", range(len(BASES)))
def test_hostile_values_are_spec_errors_naming_the_field(tmp_path, base):
    spec = copy.deepcopy(BASES[base])
    for bad, field in [({"name": "run \udc80"}, "name"), ({"workload": [{**spec["workload"][0], "name": "\ud800"}]},
                                                          "workload[0].name")]:
        with pytest.raises(dcnsim.SpecError) as e:
            dcnsim.resolve({**spec, **bad})
        assert e.value.field == field and "lone surrogate" in e.value.message
    with pytest.raises(dcnsim.SpecError, match="nests deeper"):
        dcnsim.resolve({**spec, "seed": _deep_list()})
    f = tmp_path / "s.toml"
    f.write_text(to_toml(spec) + "\nextra = " + "[" * DEEP + "]" * DEEP + "\n")
    with pytest.raises(dcnsim.SpecError) as e:
        dcnsim.resolve(build_spec(f, []))
    assert e.value.field == str(f) and "nest too deeply" in e.value.message


# Damaged stores and packs: random damage to every kind of stored file, each read back through
# `results` and `unpack`, ends in a run reported as damaged or an error naming the pack, never a
# traceback.

STORE_CASES = int(os.environ.get("DCNSIM_FUZZ_STORE_CASES", "300"))


def _random_json(rng, depth=0):
    kind = rng.randrange(7 if depth < 3 else 5)
    if kind == 5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(3))]
    if kind == 6:
        return {rng.choice(["a", "flows", "median"]): _random_json(rng, depth + 1) for _ in range(rng.randrange(3))}
    return [None, rng.random() < 0.5, rng.randint(-10, 10**6), rng.random() * 1e3,
            rng.choice(["", "x", "\udc80", "1e999"])][kind]


def _damage_bytes(rng, data: bytes) -> bytes:
    how = rng.randrange(5)
    if how == 0:
        return data[: rng.randrange(len(data) + 1)]  # cut off
    if how == 1:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if out:
                out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if how == 2:
        return os.urandom(rng.randrange(200))
    if how == 3:
        return json.dumps(_random_json(rng)).encode()
    return data + os.urandom(rng.randrange(1, 50))


def _damage_json_field(rng, data: bytes) -> bytes:
    """A field anywhere in the document replaced by a value of a random type."""
    doc = json.loads(data)
    node = doc
    while isinstance(node, dict) and node:
        key = rng.choice(list(node))
        if not isinstance(node[key], dict) or rng.random() < 0.4:
            node[key] = _random_json(rng)
            break
        node = node[key]
    return json.dumps(doc).encode()


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory):
    from dcnsim.sweep import SweepSpec, run_sweep

    out = tmp_path_factory.mktemp("fuzz-store") / "store"
    base = copy.deepcopy(BASES[0])
    base["duration_us"] = 150.0
    run_sweep(SweepSpec(base=base, axes={"seed": [1, 2]}, name="fuzz"), out, workers=1, quiet=True)
    return out


def test_randomly_damaged_stored_files_are_reported_never_a_traceback(fuzz_store):
    from dcnsim.sweep import results
    from dcnsim.sweep.store import Store

    rng = random.Random(SEED)
    keys = sorted(results(fuzz_store)["key"])
    files = ["summary.json", "DONE", "spec.json", "flows.parquet", "queues.parquet", "switches.parquet"]
    failures = []
    for case in range(STORE_CASES):
        key, name = rng.choice(keys), rng.choice(files + ["sweep.json", "claim", "failed"])
        path = {"sweep.json": fuzz_store / "sweep.json", "claim": fuzz_store / "runs" / f"{key}.claim",
                "failed": fuzz_store / "runs" / f"{key}.failed"}.get(name, fuzz_store / "runs" / key / name)
        original = path.read_bytes() if path.exists() else None
        damage = _damage_json_field if original and name.endswith(("json", "DONE")) and rng.random() < 0.5 \
            else _damage_bytes
        path.write_bytes(damage(rng, original or b'{"host": "h", "pid": 1}'))
        try:
            df = results(fuzz_store)
            assert set(df["status"]) <= {"done", "damaged", "failed", "missing", "running"}, set(df["status"])
            # A damaged index that still reads as one may list other runs; every other damage keeps both.
            assert len(df) == 2 or name == "sweep.json", f"{len(df)} rows"
            Store(fuzz_store).claim_is_stale(key)
        except Exception as e:
            failures.append(f"case {case} ({name}): {type(e).__name__}: {e}")
        finally:
            path.write_bytes(original) if original is not None else path.unlink()
            (fuzz_store / "sweep.json.damaged").unlink(missing_ok=True)
    assert not failures, f"{len(failures)} of {STORE_CASES} cases raised (seed {SEED}):\n" + "\n".join(failures[:5])


def test_randomly_damaged_packs_add_all_or_nothing(fuzz_store, tmp_path):
    import gzip

    from dcnsim.errors import UsageError
    from dcnsim.sweep import results
    from dcnsim.sweep.pack import pack, unpack

    pack(fuzz_store, tmp_path / "p.gz")
    with gzip.open(tmp_path / "p.gz", "rb") as fh:
        lines = fh.read().splitlines()
    rng = random.Random(SEED)
    failures = []
    for case in range(STORE_CASES // 3):
        damaged = list(lines)
        n = rng.randrange(len(damaged))
        damaged[n] = (_damage_json_field if rng.random() < 0.6 else _damage_bytes)(rng, damaged[n])
        path, target = tmp_path / f"d{case}.gz", tmp_path / f"s{case}"
        with gzip.open(path, "wb") as fh:
            fh.write(b"\n".join(line.replace(b"\n", b" ") for line in damaged) + b"\n")
        try:
            added, _ = unpack(path, target)
            assert added == 2 and len(results(target)) >= 2
        except UsageError as e:
            stored = list((target / "runs").iterdir()) if (target / "runs").exists() else []
            if stored:
                failures.append(f"case {case}: refused ({e}) but added {len(stored)} files")
        except Exception as e:
            failures.append(f"case {case} (line {n + 1}): {type(e).__name__}: {e}")
    assert not failures, f"{len(failures)} cases failed (seed {SEED}):\n" + "\n".join(failures[:5])
