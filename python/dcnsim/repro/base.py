"""The registry entry type."""

from dataclasses import dataclass
from typing import Callable


@dataclass
class Repro:
    name: str
    title: str
    paper: str
    build: Callable[[bool], object]  # quick -> SweepSpec
    report: Callable[[object, str], str]  # (results DataFrame, out dir) -> printable text
