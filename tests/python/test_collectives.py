"""Training jobs from Python: the collective and iteration tables, in a Result and in a saved run."""

import pandas as pd

import dcnsim


def job(iterations=2):
    return {"seed": 1, "duration_us": 20000.0,
            "topology": {"kind": "single_switch", "hosts": 8, "host_rate_gbps": 100.0},
            "transport": {"protocol": "dctcp"},
            "workload": [{"name": "job", "kind": "collective", "collective": ["ring_reduce_scatter", "ring_allgather"],
                          "ranks": 8, "size_bytes": 800_000, "iterations": iterations, "compute_us": 20.0}]}


def test_a_job_gives_one_row_per_collective_and_per_iteration():
    r = dcnsim.run(job())
    c, it = r.collectives, r.iterations
    assert list(c["kind"]) == ["ring_reduce_scatter", "ring_allgather"] * 2
    assert list(c["iteration"]) == [0, 0, 1, 1]
    assert (c["slowdown"] >= 1.0).all() and (c["ideal_ps"] > 0).all()
    assert list(it["compute_ps"]) == [20_000_000, 20_000_000]
    assert (it["iteration_ps"] == it["end_ps"] - it["start_ps"]).all()
    assert r.summary["jobs"]["job"]["iterations_finished"] == 2
    # Each collective's flows: 7 steps of 8 transfers.
    assert len(r.flows) == 2 * 2 * 7 * 8


def test_the_tables_are_saved_with_the_run(tmp_path):
    r = dcnsim.run(job(iterations=1))
    out = r.save(tmp_path / "run", plot=False)
    saved = pd.read_parquet(out / "collectives.parquet")
    assert list(saved["kind"]) == ["ring_reduce_scatter", "ring_allgather"]
    assert (out / "iterations.parquet").exists()


def test_a_run_without_a_job_has_empty_job_tables():
    spec = job()
    spec["workload"] = [{"kind": "permutation", "size_bytes": 10_000}]
    r = dcnsim.run(spec)
    assert len(r.collectives) == 0 and len(r.iterations) == 0
    assert r.summary["jobs"] == {}
