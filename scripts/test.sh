#!/usr/bin/env bash
# Sets up dcnsim and runs every test: the Rust suites, then the Python suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source .venv/bin/activate
cargo test --workspace --release
python -m pytest tests/python -q
