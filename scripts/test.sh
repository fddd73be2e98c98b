#!/usr/bin/env bash
# Sets up dcnsim and runs every gate: Python lint and types (mypy, configured in pyproject.toml), Rust
# formatting and lints, the Rust suites (test profile: opt-level 2 with debug assertions and overflow
# checks on, so every debug_assert! runs), then the Python suite.
# Every gate runs even when an earlier one fails; the run ends by naming the failed gates and exits non-zero.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
gate() {
    local name=$1
    shift
    echo "=== gate: $name ($*)"
    if ! "$@"; then
        echo "=== gate FAILED: $name" >&2
        failed+=("$name")
    fi
}

bash scripts/setup.sh || { echo "=== gate FAILED: setup (scripts/setup.sh); nothing else can run" >&2; exit 1; }
# shellcheck disable=SC1091
source .venv/bin/activate

gate "python lint" ruff check python tests
gate "python types" mypy
# The extension's stub (python/dcnsim/_core.pyi) against the built module: a binding added or changed in
# crates/dcnsim-py without its stub fails here.
gate "extension stub" python -m mypy.stubtest dcnsim._core
gate "rust format" cargo fmt --all --check
gate "rust lint" cargo clippy --workspace --all-targets --quiet -- -D warnings
# dcnsim-py has no Rust tests (its Parquet writer and bindings are tested from Python below); building it
# again in the test profile would only compile arrow/parquet a second time.
gate "rust tests" cargo test --workspace --exclude dcnsim-py
gate "python tests" python -m pytest tests/python -q

if [ ${#failed[@]} -gt 0 ]; then
    echo "=== FAILED gates: ${failed[*]}" >&2
    exit 1
fi
