#!/usr/bin/env bash
# Checks on the full ESI-Bench question set: counts, exclusions, the official-agreement test
# (eviseek's rules against ESI-Bench's own task functions, imported from the checkout at run time),
# both rule sets on every record, the taxonomy against every record and task module, the task
# text of every record, and each task module's first prompts.
#
#   ESI_BENCH_ROOT=/path/to/ESI-Bench scripts/check_esibench.sh
#
# ESI_BENCH_ROOT is a checkout of github.com/ESI-Bench/ESI-Bench (dataset/json_clean and src/).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${ESI_BENCH_ROOT:-}" ]; then
    echo "set ESI_BENCH_ROOT to a checkout of github.com/ESI-Bench/ESI-Bench" >&2
    exit 2
fi
PY=${PYTHON:-.venv/bin/python}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -m eviseek.cli.main esibench stats "$ESI_BENCH_ROOT"
# The full-set checks read all 3,502 records; on a loaded machine one test can pass the suite's
# 300 s per-test limit (meant for CI), so this script allows 30 min per test.
"$PY" -m pytest -q -p no:cacheprovider -W error -o timeout=1800 tests/eval/esibench/test_official_agreement.py \
    tests/eval/esibench/test_rule_sets.py tests/types/test_taxonomy.py \
    tests/eval/esibench/test_task_text.py tests/eval/esibench/test_prompts_command.py \
    tests/eval/esibench/test_answer_format.py tests/envs/esibench/test_feedback.py \
    tests/envs/esibench/test_single_model_steps.py tests/eval/esibench/test_dialects.py
