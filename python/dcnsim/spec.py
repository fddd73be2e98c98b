"""Loading specs (TOML files, TOML text or dicts) and running them."""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Protocol, TypeVar, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from . import _core
from .errors import SpecError, UsageError
from .result import Result

SpecLike = Union[Mapping[str, Any], str, os.PathLike]
T = TypeVar("T")


def resolve_paths(spec: dict, base: Path) -> dict:
    """Makes file paths inside a spec relative to the spec file's folder, not the caller's."""
    for w in spec.get("workload", []) if isinstance(spec.get("workload"), list) else []:
        if not isinstance(w, dict):
            continue
        for key in ("path", "cdf"):
            v = w.get(key)
            if not isinstance(v, str) or os.path.isabs(v):
                continue
            if key == "cdf" and "/" not in v and not v.endswith(".cdf"):
                continue  # a shipped CDF name
            w[key] = str((base / v).resolve())
    return spec


def _read_error(p: Path, e: OSError, what: str = "spec") -> OSError:
    msg = f"cannot read {what} {p}: {e.strerror or e}"
    return FileNotFoundError(msg) if isinstance(e, FileNotFoundError) else OSError(msg)


def read_toml(p: Path, what: str = "spec") -> dict:
    """A TOML file as a dict; an unreadable file is an OSError naming it, a file that is not UTF-8
    TOML a SpecError naming it."""
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise _read_error(p, e, what) from None
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (some Windows editors write one) is not TOML
    except UnicodeDecodeError as e:
        raise SpecError(str(p), f"not a text file (a {what} is UTF-8 TOML; byte {e.start} is not UTF-8)") from None
    return _parse_toml(text, str(p))


def _parse_toml(text: str, field: str) -> dict:
    """TOML text as a dict; a SpecError at `field` for text that is not TOML or nests too deeply
    for the reader (arrays inside arrays thousands of levels down)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(field, f"not valid TOML: {e}") from None
    except RecursionError:
        raise SpecError(field, "not a spec: its arrays or tables nest too deeply to be read "
                               f"(a spec nests a few levels, at most {MAX_DEPTH})") from None


def load_spec(path: Union[str, os.PathLike]) -> dict:
    """Reads a TOML spec file; relative paths inside it are resolved against its folder."""
    p = Path(path)
    return resolve_paths(read_toml(p), p.parent.resolve())


def as_spec(spec: SpecLike) -> dict:
    """A spec dict from a dict, a TOML file path, or TOML text.

    A str is a path when it names an existing file or cannot be TOML (no `=`); otherwise it is
    TOML text, whose relative paths resolve against the working directory."""
    if isinstance(spec, Mapping):
        try:
            return copy.deepcopy(dict(spec))
        except RecursionError:
            raise SpecError("(root)", f"nests deeper than {MAX_DEPTH} levels of tables and lists") from None
    if isinstance(spec, os.PathLike):
        return load_spec(spec)
    if isinstance(spec, str):
        if not spec.strip():
            raise SpecError("spec", "is empty: give a dict, a TOML file's path or TOML text")
        if "=" not in spec or ("\n" not in spec and os.path.isfile(spec)):
            return load_spec(spec)
        return _parse_toml(spec, "(root)")
    raise TypeError(f"a spec is a dict, a path or TOML text, not {type(spec).__name__}")


def _child(field: str, key: str) -> str:
    return key if field == "(root)" else f"{field}.{key}"


#: Deepest nesting of tables and lists a spec may have (the deepest real one has about 5).
MAX_DEPTH = 64


def check_text(text: str, field: str) -> str:
    """A string of a spec (a value or a table key) must be encodable text: a lone surrogate (a
    JSON or TOML escape such as \\udc80, or a file name that is not UTF-8) is not."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise SpecError(field, f"holds a lone surrogate (U+{ord(text[e.start]):04X} at character {e.start}), "
                               "which is not text: use a real character") from None
    return text


def plain(value: Any, field: str = "(root)", depth: int = 0) -> Any:
    """The spec as plain data the core reads (tables with string keys, lists, strings, booleans,
    integers, finite floats). numpy scalars and arrays become Python numbers and lists; anything
    else (NaN, infinity, Decimal, set, bytes, a lone surrogate in a string, nesting deeper than
    MAX_DEPTH) is a SpecError naming its field."""
    if depth > MAX_DEPTH:
        raise SpecError(field, f"nests deeper than {MAX_DEPTH} levels of tables and lists")
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise SpecError(_child(field, repr(k)), f"table keys must be strings, got {type(k).__name__}")
            check_text(k, _child(field, k.encode("utf-8", "backslashreplace").decode()))
            out[k] = plain(v, _child(field, k), depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [plain(v, f"{field}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**64:
        raise SpecError(field, f"{value} is out of range: integers in a spec are 64-bit")
    if isinstance(value, str):
        return check_text(value, field)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SpecError(field, f"must be a finite number, got {value}")
        return value
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return plain(value.tolist(), field, depth)  # numpy scalars (np.int64(3), np.float32(0.5)) and arrays
    what = type(value).__name__
    hint = "give a float or an integer" if what == "Decimal" else "use a number, string, boolean, list or table"
    raise SpecError(field, f"a {what} cannot be a spec value ({value!r:.60}): {hint}")


def _to_json(spec: dict) -> str:
    # A `setup = NAME` is expanded by the core as it reads the spec (dcnsim.setups).
    return json.dumps(plain(spec), allow_nan=False)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def _parse_part(dotted: str, part: str) -> tuple[str, Optional[int]]:
    """`name` or `name[index]` of a dotted path; a SpecError naming the whole path otherwise."""
    name, index = part, None
    if "[" in part or "]" in part:
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[(\d+)\]", part)
        if not m:
            raise SpecError(dotted, f"`{part}` is not a key or key[index] (an index is a whole number >= 0)")
        name, index = m.group(1), int(m.group(2))
    elif not part:
        raise SpecError(dotted, "an empty key between dots")
    elif not _NAME.match(part):
        raise SpecError(dotted, f"`{part}` is not a key name (letters, digits and _)")
    return name, index


def set_path(spec: dict, dotted: str, value: Any) -> None:
    """Sets `a.b[0].c` in a nested spec dict, creating tables as needed (and one list item at the
    end of a list). A path that does not fit the spec is a SpecError naming it."""
    if not isinstance(dotted, str) or not dotted:
        raise SpecError(str(dotted) or "(root)", "an empty key")
    parts = [_parse_part(dotted, p) for p in dotted.split(".")]
    cur: Any = spec
    walked: list[str] = []
    for i, (name, index) in enumerate(parts):
        last = i == len(parts) - 1
        here = ".".join(walked) or "the spec"
        if not isinstance(cur, dict):
            raise SpecError(dotted, f"`{here}` is {cur!r:.40}, not a table, so it has no key `{name}`")
        walked.append(name)
        if index is None:
            if last:
                cur[name] = value
            else:
                cur = cur.setdefault(name, {})
            continue
        arr = cur.setdefault(name, [])
        if not isinstance(arr, list):
            raise SpecError(dotted, f"`{'.'.join(walked)}` is not a list, so `[{index}]` cannot index it")
        if index > len(arr):
            raise SpecError(dotted, f"`{'.'.join(walked)}` has {len(arr)} item(s); index {index} is out of range "
                                    f"(use [{len(arr)}] to add one)")
        if index == len(arr):
            arr.append({})
        walked[-1] = f"{name}[{index}]"
        if last:
            arr[index] = value
        else:
            cur = arr[index]


def run(spec: SpecLike, *, progress: bool = False, flows: bool = True) -> Result:
    """Runs one simulation: `spec` is a dict, a TOML file path (str or Path) or TOML text.

    The interpreter lock is released while it runs, and Ctrl-C (KeyboardInterrupt) stops it within
    milliseconds. With `progress`, the core prints simulated time and event rate to stderr. With
    `flows=False` the result has no flow table (the summary is the same): at millions of flows the
    table is most of a run's memory, about 90 bytes a flow. Raises SpecError for a bad spec,
    SimulationError if the run itself fails."""
    if not isinstance(flows, bool):
        raise UsageError(f"flows must be True or False, got {flows!r}")
    text = _to_json(as_spec(spec))
    try:
        output = _interruptible(functools.partial(_core.run, summary_only=not flows), text, progress)
    except _core.SpecError as e:
        raise SpecError.from_core(e) from None
    return Result.from_core(output, flows=flows)


# An event (set by another process) that also stops runs, as Ctrl-C does: a sweep's worker processes
# ignore SIGINT and stop when the sweep sets it (dcnsim.sweep.executors).
_external_stop: Optional[StopEvent] = None


class StopEvent(Protocol):
    """What stops runs from outside: a multiprocessing or threading Event."""

    def is_set(self) -> bool: ...


def set_external_stop(stop: Optional[StopEvent]) -> None:
    """Makes `stop` stop this process's runs when it is set, as Ctrl-C does (for processes that ignore SIGINT)."""
    global _external_stop
    _external_stop = stop


def external_stop() -> Optional[StopEvent]:
    """The event set_external_stop gave, if any."""
    return _external_stop


def _interruptible(fn: Callable[..., T], *args: Any) -> T:
    """Calls `fn(*args, cancel_flag)` so that Ctrl-C stops it. Python handles signals only in the
    main thread, between bytecodes, and never while the core runs: so the core runs in a helper
    thread while the main thread waits in short, interruptible steps; on KeyboardInterrupt it sets
    the flag, which the core checks every few milliseconds, and re-raises once the core stopped."""
    flag = _core.CancelFlag()
    stop = _external_stop
    if threading.current_thread() is not threading.main_thread():
        return fn(*args, flag)  # no signal ever reaches another thread
    box: dict = {}
    entered, done = threading.Event(), threading.Event()

    def work() -> None:
        entered.set()
        try:
            box["value"] = fn(*args, flag)
        except BaseException as e:  # handed to the caller's thread below
            box["error"] = e
        finally:
            done.set()

    t = threading.Thread(target=work, name="dcnsim-run", daemon=True)
    try:
        t.start()
        while not done.wait(0.1):
            if stop is not None and stop.is_set():
                flag.set()
    except KeyboardInterrupt:
        flag.set()
        _wait_through_interrupts(entered, done)
        raise
    if "error" in box:
        raise box.pop("error")
    return box["value"]


# How long a thread whose start a Ctrl-C interrupted may take to begin before we take it that the
# interrupt came before its creation (it then never runs).
_THREAD_ENTRY_LIMIT_S = 5.0


def _wait_through_interrupts(entered: threading.Event, done: threading.Event) -> None:
    """Waits for the stopping core even through further Ctrl-Cs (one may also land inside
    `Thread.start`). Leaving while the core still runs would end the interpreter under a thread
    inside it, which glibc aborts ("FATAL: exception not rethrown") when that thread re-enters
    Python; the core stops within milliseconds of the flag."""
    deadline = time.monotonic() + _THREAD_ENTRY_LIMIT_S
    while not done.is_set():
        if not entered.is_set() and time.monotonic() > deadline:
            return  # the interrupt came before the thread existed
        try:
            done.wait(0.05)
        except KeyboardInterrupt:
            continue


def resolve(spec: SpecLike) -> dict:
    """Validates a spec without running it; returns it with every default filled in."""
    text = _to_json(as_spec(spec))
    try:
        return json.loads(_core.resolve(text))
    except _core.SpecError as e:
        raise SpecError.from_core(e) from None


def describe() -> dict:
    """Protocols, topologies, workloads, named setups and shipped CDFs (each {name, summary}; a
    setup also has its tables and the dotted keys it sets), and every parameter as {path, type,
    unit, default (None when required), doc, scope (the protocol a transport key belongs to, else
    None)}."""
    return json.loads(_core.describe())
