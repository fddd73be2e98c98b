#!/usr/bin/env bash
# Sets up dcnsim and runs the demo: DCTCP on a 32-host leaf-spine, websearch at 50% load.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source .venv/bin/activate
dcnsim demo --out out/demo "$@"
