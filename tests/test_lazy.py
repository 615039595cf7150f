"""Optional imports: the quiet PyBullet import must leave the process's output streams intact."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_SRC = Path(__file__).resolve().parents[1] / "src"

# Many threads ask for pybullet at once, as an evaluation's episodes do when they start their
# simulators side by side; afterwards both streams must still reach the parent.
_SCRIPT = textwrap.dedent(
    """
    import sys, threading
    sys.path.insert(0, {src!r})
    from eviseek._lazy import require_pybullet

    start = threading.Barrier(8)

    def first_use():
        start.wait()
        require_pybullet("test")

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("stdout still reaches the parent", flush=True)
    print("stderr too", file=sys.stderr, flush=True)
    """
)


@pytest.mark.parametrize("attempt", range(3))
def test_concurrent_first_imports_keep_stdout_and_stderr(attempt: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(src=str(_SRC))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "stdout still reaches the parent\n"
    assert proc.stderr == "stderr too\n"  # and no "pybullet build time" banner


def test_a_missing_extra_names_the_install_from_the_checkout() -> None:
    # No package index serves eviseek, so `pip install eviseek[sim]` could never work.
    from eviseek.errors import MissingExtraError

    message = str(MissingExtraError("pybullet", "sim", "the tabletop"))
    assert "pip install -e '.[sim]'" in message and "eviseek[" not in message
