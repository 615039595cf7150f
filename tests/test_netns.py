"""Ray stays on loopback: every test and benchmark that starts it runs in a loopback-only namespace."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import netns

ROOT = Path(__file__).resolve().parents[1]
# What starts (or joins) a Ray instance: in-process, from the command line, or through the CLI.
RAY_START = re.compile(r"ray\.init\(|\bray start\b|cluster_utils|RayCluster\(|\"--backend\", \"ray\"")


def _need_namespace() -> None:
    why = netns.namespace_problem()
    if why is not None:
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail(why)
        pytest.skip(why)


def test_the_helper_leaves_only_loopback() -> None:
    _need_namespace()
    probe = (
        "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
        "c = socket.create_connection(s.getsockname(), timeout=5); "
        "print(' '.join(sorted(n for _, n in socket.if_nameindex())))"
    )
    out = subprocess.run(
        netns.command([sys.executable, "-c", probe]), capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["lo"]  # lo is up (the connection worked) and alone


@pytest.mark.netns
def test_a_marked_test_runs_in_the_namespace() -> None:
    assert netns.interfaces() == ["lo"]


@pytest.mark.netns
def test_every_ray_node_reports_127_0_0_1() -> None:
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, object_store_memory=80_000_000)
    try:
        nodes = ray.nodes()
        assert nodes and {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}
        assert ray.util.get_node_ip_address() == "127.0.0.1"
        assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")
    finally:
        ray.shutdown()


def _functions_marked(text: str) -> dict[str, bool]:
    """Each test function of a file -> whether it (or the module) carries the netns marker."""
    module = bool(re.search(r"^pytestmark\b.*netns", text, re.M))
    out: dict[str, bool] = {}
    for m in re.finditer(r"((?:^@.*\n)*)^(?:async )?def (test_\w+)", text, re.M):
        out[m.group(2)] = module or "pytest.mark.netns" in m.group(1)
    return out


def test_every_ray_start_in_tests_and_benchmarks_uses_the_namespace() -> None:
    """A test function that starts Ray carries ``netns``; a benchmark that starts Ray uses tests/netns.py."""
    unmarked: list[str] = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text()
        if path == Path(__file__).resolve() or not RAY_START.search(text):
            continue
        marks = _functions_marked(text)
        # The body of each test: from its def to the next top-level def.
        for m in re.finditer(r"^(?:async )?def (test_\w+).*?(?=^\S|\Z)", text, re.M | re.S):
            if RAY_START.search(m.group(0)) and not marks.get(m.group(1)):
                unmarked.append(f"{path.relative_to(ROOT)}::{m.group(1)}")
    for path in sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "scripts").glob("*.py")):
        text = path.read_text()
        if RAY_START.search(text) and "netns" not in text:
            unmarked.append(str(path.relative_to(ROOT)))
    assert not unmarked, f"these start Ray outside a loopback-only namespace: {unmarked}"


def test_without_a_namespace_marked_tests_skip_and_fail_in_the_full_run() -> None:
    """Run as ``nobody`` (no CAP_SYS_ADMIN): a marked test skips, and fails under EVISEEK_FULL_TEST."""
    import shutil

    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        why = "needs root and setpriv (util-linux) to run a test as an unprivileged user"
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail(why)
        pytest.skip(why)
    marked = "tests/test_netns.py::test_a_marked_test_runs_in_the_namespace"
    outcomes = {}
    for full in ("", "1"):
        env = {**os.environ, "HOME": "/tmp", "EVISEEK_FULL_TEST": full}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
        proc = subprocess.run(
            [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups",
             sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist", marked],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        outcomes[full] = (proc.returncode, proc.stdout + proc.stderr)
    assert outcomes[""][0] == 0 and "1 skipped" in outcomes[""][1], outcomes[""][1][-2000:]
    assert "namespace" in outcomes[""][1]  # the skip says why (no namespace can be made here)
    assert outcomes["1"][0] == 1 and "1 failed" in outcomes["1"][1], outcomes["1"][1][-2000:]
