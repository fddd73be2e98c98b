"""Checks of every file the results store reads: a damaged file is reported by name and reason
(`Damaged`), never read as a default and never a traceback.

A run is damaged when its DONE record, summary.json or spec.json is not a JSON object of the
expected shape, or when one of its Parquet tables cannot be opened or holds another number of rows
than its summary.json records (a cut-off file loses its footer; the counts catch the rest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Union

from ..errors import UsageError

#: A JSON object as a stored file holds it: the values vary (each file is checked against its schema
#: when read, which the types cannot express).
JsonObject = Dict[str, Any]
#: What `check_fields` checks against: a type, NUMBER/OPTIONAL_NUMBER/WHOLE, a dict of field -> schema
#: (`{str: schema}`: any keys) or a one-item list of a schema.
Schema = Union[type, str, Dict[Any, Any], list]

#: No file of a run is near this size except the Parquet tables, which are checked by their footer.
MAX_JSON_BYTES = 64 << 20

NUMBER = "number"
OPTIONAL_NUMBER = "number or null"
WHOLE = "whole number"

#: The summary fields the results table, the CLI and the packs read, with their types.
SUMMARY_FIELDS = {
    "version": str, "protocol": str, "hosts": WHOLE, "seed": WHOLE, "spec": dict,
    "goodput_gbps": NUMBER, "goodput_normalized": NUMBER, "goodput_per_host_gbps": NUMBER,
    "offered_load_gbps": NUMBER, "offered_window_gbps": NUMBER, "bdp_bytes": NUMBER, "window_ps": NUMBER,
    "events": WHOLE, "wall_time_s": NUMBER,
    "flows": {"started": WHOLE, "finished": WHOLE},
    "slowdown": {"median": OPTIONAL_NUMBER, "p99": OPTIONAL_NUMBER, "mean": OPTIONAL_NUMBER},
    "queues": {"max_switch_bytes": NUMBER, "mean_switch_bytes_max": NUMBER, "switch_bytes_at_end": NUMBER,
               "drops": WHOLE, "ecn_marks": WHOLE, "trims": WHOLE, "max_switch_bytes_by_tier": {str: NUMBER},
               "mean_switch_bytes_by_tier": {str: NUMBER}},
    "slowdown_by_size": [{"group": str, "label": str, "median": OPTIONAL_NUMBER, "p99": OPTIONAL_NUMBER}],
}

#: The DONE record's fields (each optional: records of earlier versions hold fewer).
DONE_FIELDS = {"finished": NUMBER, "wall_time_s": NUMBER, "summary_only": bool, "unpacked_from": str,
               "build": str, "build_git": str, "spec_key": str, "sweep": {"name": str, "axes": dict}}

TABLES = ("flows", "queues", "switches")
#: Tables a run holds when its spec asks for them (sampling, tracing, training jobs): checked where present.
OPTIONAL_TABLES = ("timeseries", "trace", "flow_state", "collectives", "iterations")


class Damaged(UsageError):
    """A stored file that cannot be used: `file` (its path) and `reason`."""

    def __init__(self, file: Union[str, Path], reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file = str(file)
        self.reason = reason


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _matches(value: object, expected: Schema) -> bool:
    if expected == WHOLE:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == OPTIONAL_NUMBER:
        return value is None or _matches(value, NUMBER)
    if expected is bool:
        return isinstance(value, bool)
    return isinstance(expected, type) and isinstance(value, expected)


def check_fields(doc: object, schema: Schema, where: str = "", required: bool = True) -> None:
    """Raises ValueError naming the first field of `doc` that `schema` does not allow. A schema is
    a type, NUMBER/OPTIONAL_NUMBER/WHOLE, a dict of field -> schema (`{str: schema}`: any keys),
    or a one-item list (a list whose every item matches it)."""
    if isinstance(schema, dict):
        if not isinstance(doc, dict):
            raise ValueError(f"{where or 'the file'} is {_type_name(doc)}, expected an object")
        if list(schema) == [str]:
            for key, value in doc.items():
                check_fields(value, schema[str], f"{where}.{key}" if where else key, required)
            return
        for key, sub in schema.items():
            path = f"{where}.{key}" if where else key
            if key in doc:
                check_fields(doc[key], sub, path, required)
            elif required:
                raise ValueError(f"no field {path}")
        return
    if isinstance(schema, list):
        if not isinstance(doc, list):
            raise ValueError(f"{where} is {_type_name(doc)}, expected a list")
        for n, item in enumerate(doc):
            check_fields(item, schema[0], f"{where}[{n}]", required)
        return
    if not _matches(doc, schema):
        wanted = schema if isinstance(schema, str) else {bool: "a boolean", str: "a string"}.get(schema, "an object")
        raise ValueError(f"{where} is {_type_name(doc)} ({json.dumps(doc, default=str)[:40]}), expected {wanted}")


def parse_json(text: Union[str, bytes]) -> object:
    """JSON text to a value; ValueError with the reason (not JSON, nested too deeply)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to be read") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"not JSON ({e})" if str(e) else "not JSON") from None


def read_json_object(path: Path, schema: Optional[Schema] = None, required: bool = True) -> JsonObject:
    """The JSON object in `path`, checked against `schema`; Damaged naming the file otherwise."""
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise Damaged(path, f"{size} bytes, over the {MAX_JSON_BYTES} a stored JSON file may hold")
        if size == 0:
            raise Damaged(path, "empty")
        doc = parse_json(path.read_bytes())
    except Damaged:
        raise
    except FileNotFoundError:
        raise Damaged(path, "missing") from None
    except OSError as e:
        raise Damaged(path, f"cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise Damaged(path, str(e)) from None
    if not isinstance(doc, dict):
        raise Damaged(path, f"holds {_type_name(doc)}, expected a JSON object")
    try:
        check_fields(doc, schema or {}, required=required)
    except ValueError as e:
        raise Damaged(path, str(e)) from None
    return doc


def check_summary(summary: object, where: str = "") -> None:
    """ValueError naming the first summary field that is missing or of the wrong type."""
    check_fields(summary, SUMMARY_FIELDS, where)


def parquet_rows(path: Path) -> int:
    """Rows of a Parquet file, from its footer; Damaged if it cannot be opened."""
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(path).num_rows
    except FileNotFoundError:
        raise Damaged(path, "missing") from None
    except Exception as e:  # ArrowInvalid (no footer, bad magic), OSError
        raise Damaged(path, f"not a readable Parquet file ({' '.join(str(e).split())[:120]})") from None


def check_tables(run_dir: Path, summary: JsonObject, done: Optional[JsonObject]) -> None:
    """Each table the run should have opens and holds the rows its summary.json records."""
    table_rows = summary.get("table_rows")
    recorded = table_rows if isinstance(table_rows, dict) else {}
    done = done or {}
    for table in TABLES + OPTIONAL_TABLES:
        path = run_dir / f"{table}.parquet"
        if (table in OPTIONAL_TABLES or not _table_expected(table, done)) and not path.exists():
            continue
        rows = parquet_rows(path)
        want = recorded.get(f"{table}.parquet")
        if isinstance(want, int) and rows != want:
            raise Damaged(path, f"holds {rows} rows, but summary.json records {want} (cut off or replaced?)")


def _table_expected(table: str, done: JsonObject) -> bool:
    """Whether a sweep run must hold the table: flows unless summary-only, queues and switches
    unless unpacked from a summary pack (which carries no table)."""
    if not done:
        return False  # a `dcnsim run` directory: checked where present
    if table == "flows":
        return not done.get("summary_only")
    return not done.get("unpacked_from")


def check_run(run_dir: Path, single_run: bool = False) -> JsonObject:
    """Reads and checks a finished run; returns its summary, or raises Damaged. A sweep run has a
    DONE record and spec.json besides; a `dcnsim run` directory (`single_run`) neither."""
    done = None if single_run else read_json_object(run_dir / "DONE", DONE_FIELDS, required=False)
    summary = read_json_object(run_dir / "summary.json")
    try:
        check_summary(summary)
    except ValueError as e:
        raise Damaged(run_dir / "summary.json", str(e)) from None
    if not single_run:
        read_json_object(run_dir / "spec.json")
    check_tables(run_dir, summary, done)
    return summary
