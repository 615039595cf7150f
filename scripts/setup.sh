#!/usr/bin/env bash
# Create .venv with eviseek and everything its tests need, on a CPU-only machine.
# torch is pinned to the CPU build first so no later install can pull a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# Debian's chromium for the viewer's browser test (playwright drives it; never `playwright install`).
# It installs in the background while pip works: on a fresh machine both spend most of their time
# waiting on downloads and the disk, and neither needs the other.
chromium_pid=""
chromium_log=$(mktemp)
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >"$chromium_log" 2>&1 &
  chromium_pid=$!
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# --no-compile: pip would byte-compile all ~21,000 installed .py files (about a minute of CPU);
# Python compiles the few thousand that are imported on first use instead.
pip=(.venv/bin/python -m pip install --quiet --no-compile)
"${pip[@]}" --upgrade pip
"${pip[@]}" "torch==2.13.0"
"${pip[@]}" -e ".[sim,hf,train,ray,dev,docs]" "torch==2.13.0"
if [ -n "$chromium_pid" ] && ! wait "$chromium_pid"; then
  cat "$chromium_log" >&2
  echo "installing Debian's chromium failed (above); the viewer's browser test needs it" >&2
  exit 1
fi
rm -f "$chromium_log"
echo "eviseek installed in .venv ($(.venv/bin/python -c 'import eviseek; print(eviseek.__version__)'))"
