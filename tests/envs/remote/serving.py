"""Start ``eviseek env serve`` as a user would, and learn its URL from its start-up line."""

from __future__ import annotations

import re
import subprocess
import sys
import time


def serve_cli(*extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """A running ``eviseek env serve --port 0 EXTRA...`` and its URL (the caller kills it)."""
    cmd = [sys.executable, "-m", "eviseek", "env", "serve", "--port", "0", *extra]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"env serve did not start: {proc.stderr.read()}")
