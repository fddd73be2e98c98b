"""Types of the compiled extension (crates/dcnsim-py/src/lib.rs). The Python package wraps it:
dcnsim.spec runs specs, dcnsim.result turns the encoded tables into DataFrames."""

from typing import Literal, Optional, Union, final

__all__ = ["run", "describe", "resolve", "summary_schema", "build_id", "build_git",
           "_panic_for_tests", "CancelFlag", "RunOutput", "SpecError", "SimulationError",
           "__version__"]

__version__: str

#: One encoded column: ("u64", bytes) | ("f64", bytes) | ("bool", bytes of 0/1) |
#: ("opt_u64", value bytes, missing-mask bytes) | ("cat", distinct strings, bytes of u32 codes).
_EncodedColumn = Union[
    tuple[Literal["u64", "f64", "bool"], bytes],
    tuple[Literal["opt_u64"], bytes, bytes],
    tuple[Literal["cat"], list[str], bytes],
]

class SpecError(ValueError):
    """A malformed or impossible spec: `field` is the dotted path of the offending key."""

    field: str
    message: str

class SimulationError(RuntimeError):
    """A run that failed for a reason other than its spec."""

@final
class CancelFlag:
    """Set it (from any thread) to stop the run it was given to; the run raises KeyboardInterrupt."""

    def __init__(self) -> None: ...
    def set(self) -> None: ...
    def is_set(self) -> bool: ...

@final
class RunOutput:
    """A run's result, kept in Rust until a table is asked for."""

    @property
    def summary(self) -> str:
        """Aggregates and provenance, as JSON text."""

    @property
    def spec(self) -> str:
        """The spec with every default filled in, as JSON text."""

    def rows(self, name: str) -> int: ...
    def table(self, name: str) -> dict[str, _EncodedColumn]: ...
    def write_parquet(self, name: str, path: str, metadata: list[tuple[str, str]], micros: bool = False) -> None: ...

def run(
    spec_json: str, progress: bool = False, cancel: Optional[CancelFlag] = None, summary_only: bool = False
) -> RunOutput: ...
def resolve(spec_json: str) -> str: ...
def describe() -> str: ...
def summary_schema() -> str:
    """The summary's fields as JSON text: each {path, column, unit, doc}, in summary.json's order."""
def build_id() -> str:
    """A hash of the core's sources, manifests and lock file: results are keyed by it."""
def build_git() -> str:
    """The git commit the extension was built from ("-dirty" with uncommitted changes): provenance only."""
def _panic_for_tests(message: str) -> None: ...
