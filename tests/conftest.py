"""Suite-wide pytest hooks.

``@pytest.mark.netns``: the test starts Ray (or anything else that picks a network address on
its own), so it runs in a loopback-only network namespace. Outside one, the test's body is not
run here: the same test runs in a child pytest under ``tests/netns.py`` and this process reports
the child's outcome. Where no namespace can be made (not root), the test is skipped, and fails
under ``EVISEEK_FULL_TEST`` (CI) like any other missing dependency.

``--slowest-files-first`` (scripts/test.sh): whole files in the order of tests/durations.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import durations, netns

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slowest-files-first",
        action="store_true",
        help="run whole test files slowest first, by tests/durations.json (scripts/test.sh, with xdist)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("slowest_files_first"):
        durations.order_slowest_first(items)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "netns: starts Ray; runs in a child pytest inside a loopback-only network namespace",
    )
    config.addinivalue_line(
        "markers", "serial: must not share the machine with other tests (scripts/test.sh runs it alone)"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if pyfuncitem.get_closest_marker("netns") is None or netns.in_loopback_namespace():
        return None  # run the body here
    why = netns.namespace_problem()
    if why is not None:
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail(f"{why}; tests that start Ray run only in one (tests/netns.py)")
        pytest.skip(why)
    argv = [
        sys.executable, "-m", "pytest", pyfuncitem.nodeid, "-q", "-rs",
        "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=",
        "-s" if pyfuncitem.config.getoption("capture") == "no" else "--capture=fd",
    ]  # fmt: skip
    path = [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    proc = subprocess.run(netns.command(argv), cwd=ROOT, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    sys.stdout.write(out[-20000:])  # shown with -s or on failure, like the test's own output
    summary = out.strip().splitlines()[-1] if out.strip() else ""
    if proc.returncode == 0 and re.search(r"\b1 passed\b", summary):
        return True
    if proc.returncode == 0 and re.search(r"\b1 skipped\b", summary):
        reason = re.search(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", out, re.M)
        pytest.skip(f"in the namespace: {reason.group(1) if reason else summary}")
    pytest.fail(
        f"the test failed in its loopback-only namespace (exit {proc.returncode}):\n{out[-6000:]}",
        pytrace=False,
    )
