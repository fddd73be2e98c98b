#!/usr/bin/env bash
# Sets up a development environment: a virtualenv in .venv with dcnsim built in release mode and
# installed in editable mode (Python edits need no rebuild; re-run this after Rust edits).
# Idempotent, and a couple of seconds when nothing changed. Needs python3 (3.9+), cargo, and
# PyPI/crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step names itself when it fails, so a CI log that stops here says which one and why.
fail() { echo "setup failed: $1" >&2; exit 1; }
command -v python3 >/dev/null || fail "python3 is not on PATH"
command -v cargo >/dev/null || fail "cargo is not on PATH (install Rust with rustup)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' || fail "python3 is $(python3 --version 2>&1); 3.9+ is needed"

# A virtualenv is tied to its absolute path and its interpreter: one copied from elsewhere, moved, or
# half-made by an interrupted run is rebuilt rather than trusted.
venv_ok() {
    [ -x .venv/bin/python ] && .venv/bin/python -c 'import sys' 2>/dev/null &&
        case "$(head -n 1 .venv/bin/pip 2>/dev/null)" in "#!$PWD/.venv/bin/"*) true ;; *) false ;; esac
}
if ! venv_ok; then
    rm -rf .venv
    python3 -m venv .venv || fail "python3 -m venv .venv (on Debian: apt install python3-venv)"
fi
# shellcheck disable=SC1091
source .venv/bin/activate

# Full install (dependencies, the editable package and its `dcnsim` command) on first use and
# whenever pyproject.toml or this script changes; otherwise only rebuild the extension in place,
# which cargo makes a no-op when no Rust changed.
stamp=.venv/.dcnsim-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ] || [ ! -x .venv/bin/dcnsim ]; then
    # Ray is optional for users (pip install 'dcnsim[ray]'); the test suite checks the Ray executor.
    # ruff and mypy (the Python linter and type checker scripts/test.sh runs) are pinned to a minor
    # version: new releases add rules.
    # A registry hiccup should not fail a fresh machine: three tries, a pause between them.
    for try in 1 2 3; do
        python -m pip install -q "maturin>=1.5,<2" "numpy>=1.22" "pandas>=1.5" "pyarrow>=10" "matplotlib>=3.5" \
            "pytest>=7" "ray>=2.9" "ruff>=0.17,<0.18" "mypy>=2.4,<2.5" && break
        [ "$try" = 3 ] && fail "pip could not install the dependencies (is PyPI reachable?)"
        echo "setup: pip install failed (try $try of 3); retrying in 15 s" >&2
        sleep 15
    done
    maturin develop --release || fail "maturin develop --release (the Rust build; see the compiler's message above)"
    touch "$stamp"
else
    maturin develop --release --skip-install || fail "maturin develop --release --skip-install (the Rust build)"
fi
python -c "import dcnsim._core" || fail "dcnsim does not import"
