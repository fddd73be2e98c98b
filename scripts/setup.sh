#!/usr/bin/env bash
# Sets up a development environment: a virtualenv in .venv with dcnsim built in release mode.
# Idempotent and quick when nothing changed. Needs python3 (3.9+), cargo, and PyPI/crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
stamp=.venv/.deps-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    # Ray is optional for users (pip install 'dcnsim[ray]'); the test suite checks the Ray executor.
    python -m pip install -q "maturin>=1.5,<2" "numpy>=1.22" "pandas>=1.5" "pyarrow>=10" "matplotlib>=3.5" "pytest>=7" "ray>=2.9"
    touch "$stamp"
fi
maturin develop --release -q 2>&1 | grep -vE "^(📦|🔗|🛠|✏️|⚠️  Warning: Couldn't find)" || true
python -c "import dcnsim" || { echo "setup failed: dcnsim does not import" >&2; exit 1; }
