#!/usr/bin/env bash
# The BFCL data and AST checker for `minloop eval bfcl`, without bfcl-eval's heavy dependencies
# (model SDKs, torch, ...): minloop imports only its data files and its AST checker, which need
# nothing beyond the standard library. Usage: bash scripts/install_eval.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
"$python" -m pip install --quiet --no-deps "bfcl-eval==2026.3.23"
