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

Reading a pack checks every line before anything is added: its size (MAX_LINE_BYTES, and
MAX_PACK_BYTES decompressed in all, read without holding more than one line), the header, each
record (key, spec, a summary with the fields the results table reads, the DONE record) and the
number of runs the header announces; a pack that fails any check adds nothing. Each record's
DONE keeps the build of the core that made the run (runs packed before builds were recorded are
of an unknown build), so an unpacked run is reused by a sweep of another build only on purpose.

An unpacked run is marked summary-only in its DONE record, as a run of a sweep without flow tables:
`load_flows` refuses it with a message saying how to get the flows back."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Tuple, TypedDict, cast

from ..build import build_id
from ..errors import UsageError, naming, write_text
from .checks import DONE_FIELDS, Damaged, JsonObject, check_fields, check_summary, parse_json, read_json_object
from .store import Store, StrPath, SweepEntry, sweeps_of

FORMAT = "dcnsim-summary-pack/1"
# Run keys are lowercase hex digests (store.run_key); anything else in a pack could name a path
# outside the store, so it is refused.
_KEY = re.compile(r"^[0-9a-f]{8,64}$")
# A pack line larger than this is not a summary (a summary is ~10 KB): refuse rather than load it.
MAX_LINE_BYTES = 4 << 20
# Decompressed size of a whole pack: 100,000 runs of 10 KB.
MAX_PACK_BYTES = 1 << 30


class _Header(TypedDict):
    format: str
    runs: int


class PackHeader(_Header, total=False):
    """A pack's first line: its format, how many runs follow, the store's sweeps and the runs' builds."""

    sweeps: List[SweepEntry]
    builds: Dict[str, int]


class PackRecord(TypedDict):
    """A run of a pack: its key, spec.json, summary.json and DONE record."""

    key: str
    spec: JsonObject
    summary: JsonObject
    done: JsonObject


def pack(out: StrPath, path: StrPath) -> int:
    """Writes the finished runs of the store `out` to the pack `path`; returns how many."""
    return write_pack(out, path)[0]


def write_pack(out: StrPath, path: StrPath) -> Tuple[int, List[Damaged]]:
    """Writes the finished, undamaged runs of the store `out` to the pack `path`; returns how many
    and the damaged runs left out (each names its file and the reason)."""
    store = Store.open(out)
    if store.single_run:
        raise UsageError(f"{out} is a `dcnsim run` directory, not a sweep store: there is nothing to pack")
    records: List[PackRecord] = []
    damaged: List[Damaged] = []
    for key in (k for k in store.finished_keys() if _KEY.match(k)):
        try:
            records.append(_record_of(store, key))
        except Damaged as e:
            damaged.append(e)
    builds = Counter(r["done"].get("build") or "unknown" for r in records)
    header: PackHeader = {"format": FORMAT, "runs": len(records), "sweeps": store.read_sweeps(), "builds": dict(builds)}
    tmp = Path(f"{path}.tmp-{os.getpid()}")
    try:
        with naming(path), open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write((json.dumps(header, sort_keys=True) + "\n").encode())
            for record in records:
                fh.write((json.dumps(record, sort_keys=True) + "\n").encode())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return len(records), damaged


def _record_of(store: Store, key: str) -> PackRecord:
    """A finished run as a pack record; Damaged if any of its files is."""
    store.summary(key)  # checks every file of the run
    d = store.run_dir(key)
    return {"key": key, "spec": read_json_object(d / "spec.json"), "summary": read_json_object(d / "summary.json"),
            "done": read_json_object(d / "DONE")}


def _lines(path: StrPath) -> Iterator[Tuple[int, object]]:
    """The pack's JSON lines, each checked for size and syntax; errors name the file and line. No
    line is read whole before its size is known to be within MAX_LINE_BYTES."""
    total = 0
    try:
        with gzip.open(path, "rb") as fh:
            n = 0
            while True:
                line = fh.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                n += 1
                total += len(line)
                if len(line) > MAX_LINE_BYTES:
                    raise UsageError(f"{path}: line {n} is over {MAX_LINE_BYTES} bytes: not a summary pack")
                if total > MAX_PACK_BYTES:
                    raise UsageError(f"{path}: over {MAX_PACK_BYTES} bytes decompressed: not a summary pack")
                try:
                    yield n, parse_json(line)
                except ValueError as e:
                    raise UsageError(f"{path}: line {n}: {e}: not a summary pack") from None
    except (FileNotFoundError, PermissionError):
        raise  # named by the command line's OSError handler
    except (OSError, EOFError, zlib.error) as e:  # BadGzipFile is an OSError
        raise UsageError(f"{path}: not a gzip'd summary pack ({' '.join(str(e).split()) or type(e).__name__})") \
            from None


def check_header(path: StrPath, header: object) -> PackHeader:
    """The pack's header, checked: format, runs (a whole number), sweeps (sweep.json entries)."""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise UsageError(f"{path}: not a summary pack (its first line must be a header with format {FORMAT!r})")
    runs = header.get("runs")
    if not isinstance(runs, int) or isinstance(runs, bool) or runs < 0:
        raise UsageError(f"{path}: header: runs is {json.dumps(runs)[:40]}, expected a whole number of runs")
    try:
        sweeps_of({"sweeps": header.get("sweeps", [])})
    except Damaged as e:
        raise UsageError(f"{path}: header: {e.reason}") from None
    return cast(PackHeader, header)  # checked above


def check_record(path: StrPath, n: int, record: object) -> PackRecord:
    """One run record, checked: key, spec, summary (the fields the results read), done."""
    if not isinstance(record, dict):
        raise UsageError(f"{path}: line {n} is not a run record (key, spec, summary, done)")
    key = record.get("key")
    if not isinstance(key, str) or not _KEY.match(key) or not all(k in record for k in ("spec", "summary", "done")):
        raise UsageError(f"{path}: line {n} is not a run record (key, spec, summary, done)")
    try:
        check_fields(record["spec"], dict, "spec")
        check_fields(record["done"], DONE_FIELDS, "done", required=False)
        check_summary(record["summary"], "summary")
    except ValueError as e:
        raise UsageError(f"{path}: line {n} (run {key}): {e}") from None
    return cast(PackRecord, record)  # checked above


def _records(path: StrPath) -> Iterator[PackRecord]:
    """The pack's checked records, after its checked header; the count the header announces is
    checked at the end (a cut-off pack holds fewer)."""
    lines = _lines(path)
    first = next(lines, None)
    header = check_header(path, first[1] if first else None)
    keys = set()
    for n, line in lines:
        record = check_record(path, n, line)
        if record["key"] in keys:
            raise UsageError(f"{path}: line {n} repeats run {record['key']}")
        keys.add(record["key"])
        yield record
    if len(keys) != header["runs"]:
        raise UsageError(f"{path}: the header announces {header['runs']} runs but the pack holds {len(keys)} "
                         f"(a truncated file?)")


def read_header(path: StrPath) -> PackHeader:
    lines = _lines(path)
    first = next(lines, None)
    return check_header(path, first[1] if first else None)


@dataclass
class Unpacked:
    added: int
    present: int
    other_builds: int  # of the runs added, those made by another (or an unknown) build of the core


def unpack(path: StrPath, out: StrPath) -> Tuple[int, int]:
    """Adds the pack's runs to the store `out` (created if needed) as finished, summary-only runs.
    A run `out` already holds finished is left as it is. Returns (added, already there)."""
    done = unpack_runs(path, out)
    return done.added, done.present


def unpack_runs(path: StrPath, out: StrPath) -> Unpacked:
    """`unpack`, saying how many of the added runs another build of the core made. The whole pack
    is checked first: one that fails a check adds nothing."""
    if not Path(path).is_file():
        raise UsageError(f"{path}: no such pack file")
    for _ in _records(path):
        pass  # every check, before anything is added
    header = read_header(path)
    store = Store(out)
    added: List[str] = []
    present = other = 0
    try:
        for record in _records(path):
            if store.is_done(record["key"]) and store.damage(record["key"]) is None:
                present += 1
                continue
            _install_record(store, record, path)
            added.append(record["key"])
            other += record["done"].get("build") != build_id()
        for s in header.get("sweeps", []):
            store.add_sweep(s["name"], s["definition"], s["runs"])
    except BaseException:
        for key in added:  # nothing from a pack that could not be added whole
            shutil.rmtree(store.run_dir(key), ignore_errors=True)
        raise
    return Unpacked(len(added), present, other)


def _install_record(store: Store, record: PackRecord, path: StrPath) -> None:
    key = record["key"]
    tmp = store.runs / f".tmp-{key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        write_text(tmp / "spec.json", json.dumps(record["spec"], indent=1, sort_keys=True))
        write_text(tmp / "summary.json", json.dumps(record["summary"], indent=2, sort_keys=True) + "\n")
        done = {**record["done"], "summary_only": True, "unpacked_from": str(path)}
        write_text(tmp / "DONE", json.dumps(done))
        store.install(tmp, key)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
