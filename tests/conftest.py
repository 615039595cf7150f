"""Suite-wide pytest hooks.

``@pytest.mark.netns``: the test starts Ray (or anything else that picks a network address on
its own), so it runs in a loopback-only network namespace. Outside one, the test's body is not
run here: the same test runs in a child pytest under ``tests/netns.py`` and this process reports
the child's outcome. One child runs every selected netns test of a file, when the first of them
comes up, so a file pays for one interpreter start (and can share one Ray instance through a
module-scoped fixture); each test still reports its own outcome, read from a report the child
writes test by test. Where no namespace can be made (not root), the test is skipped, and fails
under ``EVISEEK_FULL_TEST`` (CI) like any other missing dependency.

``--slowest-files-first`` (scripts/test.sh): whole files in the order of tests/durations.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import durations, netns

# One intra-op thread per test process. scripts/test.sh runs one xdist worker per CPU, so torch's
# (and OpenBLAS's) default of one thread per CPU in every worker oversubscribes the machine, and
# OpenMP threads that wait for a busy core spin. Measured on 2 CPUs:
# tests/train/test_crop_reaches_model.py took 11.7 and 10.0 s of CPU with two threads, 8.5 and
# 7.7 s with one. Set before any test imports torch; the processes a test starts (CLI runs, the
# docs pages) inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
# Set in a namespace child: the file its pytest_runtest_logreport appends each test's phases to.
REPORT_ENV = "EVISEEK_NETNS_REPORT"


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
    report = os.environ.pop(REPORT_ENV, None)
    if report and netns.in_loopback_namespace():
        _report_path.append(report)
    config.addinivalue_line(
        "markers",
        "netns: starts Ray; runs in a child pytest inside a loopback-only network namespace",
    )
    config.addinivalue_line(
        "markers", "serial: must not share the machine with other tests (scripts/test.sh runs it alone)"
    )


class _Batch:
    """What one namespace child reported: nodeid -> phase reports, and the child's output."""

    def __init__(self, reports: dict[str, list[dict]], output: str, returncode: int) -> None:
        self.reports = reports
        self.output = output
        self.returncode = returncode


_batches: dict[Path, _Batch] = {}
# In a namespace child: where to write its reports (taken out of the environment, so that a
# pytest the tests themselves start does not write there too).
_report_path: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _report_path:
        return
    path = _report_path[0]
    reason = ""
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    entry = {
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "reason": reason,
        "text": report.longreprtext if report.failed else "",
        "sections": [[title, body] for title, body in report.sections],
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def _run_in_namespace(item: pytest.Function) -> _Batch:
    """Run every selected netns test of ``item``'s file in one child pytest inside a namespace."""
    batch = _batches.get(item.path)
    if batch is not None:
        return batch
    ids = [
        i.nodeid
        for i in item.session.items
        if i.path == item.path and i.get_closest_marker("netns") is not None
    ]
    if item.nodeid not in ids:
        ids = [item.nodeid]
    with tempfile.TemporaryDirectory(prefix="netns-report") as tmp:
        report = Path(tmp) / "reports.jsonl"
        argv = [
            sys.executable, "-m", "pytest", *ids, "-q", "-rs",
            "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=",
            "-s" if item.config.getoption("capture") == "no" else "--capture=fd",
        ]  # fmt: skip
        path = [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p), REPORT_ENV: str(report)}
        proc = subprocess.run(netns.command(argv), cwd=ROOT, env=env, capture_output=True, text=True)
        reports: dict[str, list[dict]] = {}
        if report.exists():
            for line in report.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                reports.setdefault(entry["nodeid"], []).append(entry)
    batch = _Batch(reports, proc.stdout + proc.stderr, proc.returncode)
    _batches[item.path] = batch
    return batch


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if pyfuncitem.get_closest_marker("netns") is None or netns.in_loopback_namespace():
        return None  # run the body here
    why = netns.namespace_problem()
    if why is not None:
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail(f"{why}; tests that start Ray run only in one (tests/netns.py)")
        pytest.skip(why)
    first = pyfuncitem.path not in _batches
    batch = _run_in_namespace(pyfuncitem)
    phases = batch.reports.get(pyfuncitem.nodeid, [])
    if first and pyfuncitem.config.getoption("capture") == "no":
        sys.stdout.write(batch.output[-20000:])  # the child printed straight to its stdout
    shown: set[tuple[str, str]] = set()
    for entry in phases:  # shown with -s or on failure, like the test's own output
        for title, body in entry["sections"]:  # a later phase repeats the earlier phases' sections
            if (title, body) not in shown:
                shown.add((title, body))
                sys.stdout.write(f"--- {title} (in the namespace) ---\n{body}")
    failed = [e for e in phases if e["outcome"] == "failed"]
    if failed:
        text = "\n".join(f"[{e['when']}] {e['text']}" for e in failed)
        pytest.fail(f"the test failed in its loopback-only namespace:\n{text[-6000:]}", pytrace=False)
    call = [e for e in phases if e["when"] == "call"]
    if call and call[0]["outcome"] == "passed":
        return True
    skipped = [e for e in phases if e["outcome"] == "skipped"]
    if skipped:
        pytest.skip(f"in the namespace: {skipped[0]['reason']}")
    pytest.fail(
        f"the test did not report in its loopback-only namespace (child exit {batch.returncode}):\n"
        f"{batch.output[-6000:]}",
        pytrace=False,
    )
