"""Which build of the core this is: its id (a hash of the core's sources, manifests and lock
file, computed when the extension is compiled) and the git commit it was compiled from.

The results store keys runs by the build id, so results of another build of the core are never
taken for this one's; the git state is provenance only (a commit that changes no core source
keeps the id)."""

from __future__ import annotations

from . import _core

#: The id of an extension compiled before build ids existed.
UNKNOWN = "unknown"


def build_id() -> str:
    read = getattr(_core, "build_id", None)
    return read() if read else UNKNOWN


def build_git() -> str:
    read = getattr(_core, "build_git", None)
    return read() if read else UNKNOWN


def build_info() -> dict:
    """{"id", "git"}: what summaries, DONE records and packs record as the run's build."""
    return {"id": build_id(), "git": build_git()}


def short(build) -> str:
    """A build id as tables show it: its first 12 digits, or "unknown" for a run that recorded none."""
    return build[:12] if isinstance(build, str) and build else UNKNOWN
