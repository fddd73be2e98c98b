"""Summary packs: a results store's finished runs without their per-flow tables, in one small file.

A run's flows.parquet can be hundreds of MB (a 24 ms WKa run of the SIRD fabric: 180 MB), while
every table a sweep reports (`dcnsim results`, the repro reports of sweeps like `sird-table5`) reads
only summary.json. A pack keeps summary.json, spec.json and the DONE record of each finished run
(about 1 KB per run once compressed: 396 KB for the 432 runs of `sird-table5`), so a sweep too long for
one machine session can be carried to the next one (unpack, then run the same sweep: the packed runs
count as finished for a sweep with `flow_tables = false`, as `sird-table5` is; one that keeps flow
tables runs them again), shared, or committed as the evidence behind a documented table.

Format: gzip'd JSON Lines. The first line is the header {"format": FORMAT, "runs": N, "sweeps":
[...]} (the store's sweep.json entries, so `dcnsim results` lists them after unpacking); then one
line per run {"key", "spec", "summary", "done"}, sorted by key. Written with a zero gzip timestamp,
so packing the same store twice gives the same bytes.

An unpacked run is marked summary-only in its DONE record, as a run of a sweep without flow tables:
`load_flows` refuses it with a message saying how to get the flows back."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from pathlib import Path
from typing import Tuple

from ..errors import UsageError
from .store import Store

FORMAT = "dcnsim-summary-pack/1"
# Run keys are lowercase hex digests (store.run_key); anything else in a pack could name a path
# outside the store, so it is refused.
_KEY = re.compile(r"^[0-9a-f]{8,64}$")
# A pack line larger than this is not a summary (a summary is ~10 KB): refuse rather than load it.
MAX_LINE_BYTES = 4 << 20


def pack(out, path) -> int:
    """Writes the finished runs of the store `out` to the pack `path`; returns how many."""
    store = Store.open(out)
    if store.single_run:
        raise UsageError(f"{out} is a `dcnsim run` directory, not a sweep store: there is nothing to pack")
    keys = sorted(d.name for d in store.runs.iterdir() if d.is_dir() and _KEY.match(d.name) and store.is_done(d.name))
    header = {"format": FORMAT, "runs": len(keys), "sweeps": store.read_sweeps()}
    tmp = Path(f"{path}.tmp-{os.getpid()}")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write((json.dumps(header, sort_keys=True) + "\n").encode())
        for key in keys:
            d = store.run_dir(key)
            record = {"key": key, "spec": json.loads((d / "spec.json").read_text()),
                      "summary": json.loads((d / "summary.json").read_text()),
                      "done": json.loads((d / "DONE").read_text())}
            fh.write((json.dumps(record, sort_keys=True) + "\n").encode())
    os.replace(tmp, path)
    return len(keys)


def _lines(path):
    """The pack's JSON lines, each checked for size and syntax; errors name the file and line."""
    try:
        with gzip.open(path, "rb") as fh:
            for n, line in enumerate(fh, start=1):
                if len(line) > MAX_LINE_BYTES:
                    raise UsageError(f"{path}: line {n} is over {MAX_LINE_BYTES} bytes: not a summary pack")
                try:
                    yield n, json.loads(line)
                except ValueError as e:
                    raise UsageError(f"{path}: line {n} is not JSON ({e}): not a summary pack") from None
    except (gzip.BadGzipFile, EOFError) as e:
        raise UsageError(f"{path}: not a gzip'd summary pack ({e})") from None


def unpack(path, out) -> Tuple[int, int]:
    """Adds the pack's runs to the store `out` (created if needed) as finished, summary-only runs.
    A run `out` already holds finished is left as it is. Returns (added, already there)."""
    if not Path(path).is_file():
        raise UsageError(f"{path}: no such pack file")
    lines = _lines(path)
    first = next(lines, None)
    if first is None or not isinstance(first[1], dict) or first[1].get("format") != FORMAT:
        raise UsageError(f"{path}: not a summary pack (its first line must be a header with format {FORMAT!r})")
    header = first[1]
    store = Store(out)
    added = present = 0
    for n, record in lines:
        key = record.get("key") if isinstance(record, dict) else None
        if not isinstance(key, str) or not _KEY.match(key) or not all(k in record for k in ("spec", "summary", "done")):
            raise UsageError(f"{path}: line {n} is not a run record (key, spec, summary, done)")
        if store.is_done(key):
            present += 1
            continue
        tmp = store.runs / f".tmp-{key}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        (tmp / "spec.json").write_text(json.dumps(record["spec"], indent=1, sort_keys=True))
        (tmp / "summary.json").write_text(json.dumps(record["summary"], indent=2, sort_keys=True) + "\n")
        (tmp / "DONE").write_text(json.dumps({**record["done"], "summary_only": True, "unpacked_from": str(path)}))
        store.install(tmp, key)
        added += 1
    if added + present != header.get("runs"):
        raise UsageError(f"{path}: the header announces {header.get('runs')} runs but the pack holds "
                         f"{added + present} (a truncated file?); the {added} read were added")
    for s in header.get("sweeps", []):
        store.add_sweep(s["name"], s["definition"], s["runs"])
    return added, present
