#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup_verl.sh  # verl in its own venv (.venv-verl); tests/train/test_verl_autotool.py uses it
# Tests that may skip on a partial machine (no .venv-verl) fail instead in this full run.
export EVISEEK_FULL_TEST=1
# Lint and type-check first: cheap, and a failure here names the exact line.
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
