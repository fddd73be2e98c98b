"""Loading specs (TOML files, TOML text or dicts) and running them."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any, Mapping, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from . import _core
from .errors import SpecError
from .result import Result

SpecLike = Union[Mapping[str, Any], str, os.PathLike]


def _resolve_paths(spec: dict, base: Path) -> dict:
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


def _read_error(p: Path, e: OSError) -> OSError:
    msg = f"cannot read spec {p}: {e.strerror or e}"
    return FileNotFoundError(msg) if isinstance(e, FileNotFoundError) else OSError(msg)


def load_spec(path: Union[str, os.PathLike]) -> dict:
    """Reads a TOML spec file; relative paths inside it are resolved against its folder."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise _read_error(p, e) from None
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(str(p), f"not valid TOML: {e}") from None
    return _resolve_paths(spec, p.parent.resolve())


def as_spec(spec: SpecLike) -> dict:
    """A spec dict from a dict, a TOML file path, or TOML text.

    A str is a path when it names an existing file or cannot be TOML (no `=`); otherwise it is
    TOML text, whose relative paths resolve against the working directory."""
    if isinstance(spec, Mapping):
        return copy.deepcopy(dict(spec))
    if isinstance(spec, os.PathLike):
        return load_spec(spec)
    if isinstance(spec, str):
        if "=" not in spec or ("\n" not in spec and os.path.isfile(spec)):
            return load_spec(spec)
        try:
            return tomllib.loads(spec)
        except tomllib.TOMLDecodeError as e:
            raise SpecError("(root)", f"not valid TOML: {e}") from None
    raise TypeError(f"a spec is a dict, a path or TOML text, not {type(spec).__name__}")


def _to_json(spec: dict) -> str:
    try:
        # allow_nan=False: the core reads strict JSON, so NaN/inf must fail here with a clear message.
        return json.dumps(spec, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise SpecError("(root)",
                        f"the spec holds a value that is not a plain number, string, list or table: {e}") from None


def set_path(spec: dict, dotted: str, value: Any) -> None:
    """Sets `a.b[0].c` in a nested spec dict, creating tables as needed."""
    cur: Any = spec
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        name, index = part, None
        if part.endswith("]") and "[" in part:
            name, idx = part[:-1].split("[", 1)
            index = int(idx)
        last = i == len(parts) - 1
        if index is None:
            if last:
                cur[name] = value
            else:
                cur = cur.setdefault(name, {})
        else:
            arr = cur.setdefault(name, [])
            while len(arr) <= index:
                arr.append({})
            if last:
                arr[index] = value
            else:
                cur = arr[index]


def run(spec: SpecLike, *, progress: bool = False) -> Result:
    """Runs one simulation: `spec` is a dict, a TOML file path (str or Path) or TOML text.

    The interpreter lock is released while it runs. With `progress`, the core prints simulated
    time and event rate to stderr. Raises SpecError for a bad spec, SimulationError if the run
    itself fails."""
    text = _to_json(as_spec(spec))
    try:
        raw = _core.run(text, progress)
    except _core.SpecError as e:
        raise SpecError.from_core(e) from None
    return Result.from_raw(raw)


def resolve(spec: SpecLike) -> dict:
    """Validates a spec without running it; returns it with every default filled in."""
    text = _to_json(as_spec(spec))
    try:
        return json.loads(_core.resolve(text))
    except _core.SpecError as e:
        raise SpecError.from_core(e) from None


def describe() -> dict:
    """Protocols, topologies, workloads and shipped CDFs (each {name, summary}), and every
    parameter as {path, type, unit, default (None when required), doc}."""
    return json.loads(_core.describe())
