#!/usr/bin/env bash
# Sets up everything (scripts/setup.sh: virtualenv, embedded runtime, bundled model, test tools)
# and runs one agent on the embedded model. Later runs skip what is already installed.
# Usage: bash quickstart.sh ["PROMPT"]
set -euo pipefail
cd "$(dirname "$0")"
prompt=${1:-"How many Python files are in this folder and which is the largest?"}

bash scripts/setup.sh
exec .venv/bin/minloop run "$prompt"
