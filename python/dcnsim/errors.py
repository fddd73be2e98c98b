"""Errors raised for bad input and failed runs."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

from . import _core

#: A run that failed for a reason other than its spec (an internal invariant, an unreadable file).
SimulationError = _core.SimulationError


class SpecError(_core.SpecError):
    """A malformed or impossible spec. `field` is the dotted path of the offending key (e.g.
    `workload[0].load`), `message` says what is wrong.

    Subclasses the extension's SpecError (itself a ValueError), so one `except` catches errors
    found in Python (TOML syntax, sweep files) and in the core alike."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"spec error at `{field}`: {message}")
        self.field = field
        self.message = message

    def __reduce__(self) -> tuple[type[SpecError], tuple[str, str]]:
        # Rebuild from (field, message), not from the formatted text: sweeps send errors across processes.
        return (type(self), (self.field, self.message))

    @classmethod
    def from_core(cls, e: _core.SpecError) -> SpecError:
        return cls(e.field, e.message)


class UsageError(ValueError):
    """A command or function used on the wrong thing: a directory that holds no results, a plot
    column that does not exist. The message says what was expected."""


@contextlib.contextmanager
def naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """Writes inside name `path` in any OSError they raise: a write that fails after the file was
    opened (a full disk: `[Errno 28] No space left on device`) carries no file name of its own."""
    try:
        yield
    except OSError as e:
        if e.filename is not None:
            raise
        raise OSError(e.errno, e.strerror or " ".join(str(e).split()) or type(e).__name__, str(path)) from e


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """`Path(path).write_text(text)`, naming the file in any OSError."""
    with naming(path):
        Path(path).write_text(text)
