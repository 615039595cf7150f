#!/usr/bin/env bash
# Create .venv-verl: verl with the transformers it pins (>=5.5.3,<5.11), a CPU torch, and eviseek
# (no extras). verl and TRL want different transformers versions, so verl gets its own venv;
# tests/train/test_verl_autotool.py runs its checks in it through a subprocess.
# torch is pinned to the CPU build on every line that could pull a CUDA one.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VERL_SPEC=${VERL_SPEC:-"verl==0.9.1"}
VENV=.venv-verl
# The import check covers verl's agent-loop modules, which need the extra packages below.
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c \
  "import eviseek, pytest, pytest_timeout, verl.experimental.agent_loop.tool_parser" 2>/dev/null; then
  echo "verl already installed in $VENV ($("$VENV/bin/python" -c 'import verl; print(verl.__version__)'))"
  exit 0
fi
"$PY" -m venv "$VENV"
# --no-compile: the verl test imports a small part of the ~21,000 installed .py files; Python
# compiles those on first use instead of pip compiling all of them (about a minute of CPU).
pip=("$VENV/bin/python" -m pip install --quiet --no-compile)
"${pip[@]}" --upgrade pip
"${pip[@]}" "torch==2.13.0"
# cachetools, fastapi, uvicorn, pyzmq and msgspec come from verl's "verl-core" extra: the agent
# loop and reward loop import them. The rest of that extra (vLLM, CUDA tools) is not needed here.
"${pip[@]}" "$VERL_SPEC" "transformers>=5.5.3,<5.11,!=5.6.0" \
  "torch==2.13.0" cachetools fastapi uvicorn pyzmq msgspec \
  "pytest>=8" "pytest-asyncio>=0.23" "pytest-timeout>=2.3" -e .
echo "verl installed in $VENV ($("$VENV/bin/python" -c 'import verl; print(verl.__version__)'))"
