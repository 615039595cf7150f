#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite (what CI runs).
#
# Tests run in parallel, one pytest-xdist worker per CPU, except those marked `serial` (they
# time things or load the machine on purpose), which run alone afterwards. verl's own venv
# builds in the background meanwhile; the one test that needs it waits for it.
# Extra arguments go to both pytest runs (e.g. `bash scripts/test.sh -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
# Byte-code caches on, even where the environment turns them off (some sandboxes and CI images
# set PYTHONDONTWRITEBYTECODE): the suite starts several hundred Python processes (CLI runs, env
# workers, model servers), and without the caches each one compiles numpy, pydantic, torch and
# eviseek from source again; measured here, that doubled the CPU time of tests/cli/test_main.py.
# Python writes each module's cache on first import, beside the source in .venv and src.
unset PYTHONDONTWRITEBYTECODE
# .venv-verl, for tests/train/test_verl_autotool.py, builds beside .venv: pip installs on one core
# at a time, so two venvs built together take little longer than one, and the ~40 s of CPU that
# .venv-verl takes stays out of the parallel tests. Its exit status goes to $verl_status when it
# ends; the verl test waits for that file, so it runs among the parallel tests, not after them.
verl_status=$(mktemp -d)/status
verl_log=$verl_status.log
(
  if bash scripts/setup_verl.sh >"$verl_log" 2>&1; then s=0; else s=$?; fi
  echo "$s" >"$verl_status.tmp" && mv "$verl_status.tmp" "$verl_status"
  exit "$s"
) &
verl_setup=$!
export EVISEEK_VERL_SETUP_STATUS=$verl_status
bash scripts/setup.sh
# Tests that may skip on a partial machine (no .venv-verl) fail instead in this full run.
export EVISEEK_FULL_TEST=1
# Lint first: cheap, and a failure here names the exact line.
.venv/bin/ruff check src tests benchmarks scripts
# The type check runs beside the tests: about a minute of one CPU on a fresh clone (it reads some
# 7,000 modules of torch, transformers, openai and ray to check our 314), which the parallel
# tests leave idle part of the time. Its verdict is checked when they end.
mypy_log=$(mktemp)
.venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_run=$!
workers=${EVISEEK_TEST_WORKERS:-$(nproc)}
# Whole files go to one worker (--dist loadfile): module-scoped fixtures are built once. The
# slowest files start first (tests/durations.py), so no long file is left to run alone at the end.
status=0
.venv/bin/python -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder --slowest-files-first \
  -m "not serial" "$@" || status=$?
if ! wait "$mypy_run"; then
  cat "$mypy_log"
  echo "mypy found type errors (above)" >&2
  status=1
fi
tail -n 1 "$mypy_log"
if [ "$status" -ne 0 ]; then
  exit "$status"
fi
if ! wait "$verl_setup"; then
  cat "$verl_log"
  echo "scripts/setup_verl.sh failed" >&2
  exit 1
fi
tail -n 1 "$verl_log"
.venv/bin/python -m pytest -q -m serial "$@" || status=$?
# Exit 5: the arguments selected no serial test (a run of one file, say); that is not a failure.
if [ "$status" -ne 0 ] && [ "$status" -ne 5 ]; then
  exit "$status"
fi
