#!/usr/bin/env bash
# Sets up a development environment: a virtualenv in .venv with dcnsim built in release mode and
# installed in editable mode (Python edits need no rebuild; re-run this after Rust edits).
# Idempotent, and a couple of seconds when nothing changed. Needs python3 (3.9+), cargo, and
# PyPI/crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate

# Full install (dependencies, the editable package and its `dcnsim` command) on first use and
# whenever pyproject.toml or this script changes; otherwise only rebuild the extension in place,
# which cargo makes a no-op when no Rust changed.
stamp=.venv/.dcnsim-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ] || [ ! -x .venv/bin/dcnsim ]; then
    # Ray is optional for users (pip install 'dcnsim[ray]'); the test suite checks the Ray executor.
    # ruff (the Python linter scripts/test.sh runs) is pinned to a minor version: new releases add rules.
    python -m pip install -q "maturin>=1.5,<2" "numpy>=1.22" "pandas>=1.5" "pyarrow>=10" "matplotlib>=3.5" \
        "pytest>=7" "ray>=2.9" "ruff>=0.17,<0.18"
    maturin develop --release
    touch "$stamp"
else
    maturin develop --release --skip-install
fi
python -c "import dcnsim._core" || { echo "setup failed: dcnsim does not import" >&2; exit 1; }
