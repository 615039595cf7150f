"""A real two-node Ray cluster on 127.0.0.1, started with ``ray start`` as an operator would.

Each node is one ``ray start --block`` process in a session of its own, so the test can kill
exactly the processes it started: the node's process tree, found from that pid. Nothing else
on the machine (another user's Ray, say) is touched; ``ray stop`` is never called.

Tests that use it are marked ``netns`` (tests/netns.py): in a loopback-only network namespace
``--node-ip-address 127.0.0.1`` stays 127.0.0.1 (elsewhere Ray swaps in the machine's own
interface address), so no traffic leaves loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc), children first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


# Runs ``ray start --block`` and kills its own process group (the node) when its stdin reaches
# EOF: the test closes it on teardown, and the kernel closes it if the test process dies first
# (a timeout, a kill), so no node outlives the test that started it.
_WATCHDOG = (
    "import os, signal, subprocess, sys\n"
    "subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL)\n"
    "sys.stdin.read()\n"
    "os.killpg(0, signal.SIGKILL)\n"
)


# Connects to the cluster (again until the head's GCS answers), then for each number
# N read from stdin waits until N nodes are alive and prints every node's address as JSON.
_WATCHER = (
    "import json, sys, time, ray\n"
    "while True:\n"
    "    try:\n"
    "        ray.init(address=sys.argv[1], log_to_driver=False)\n"
    "        break\n"
    "    except Exception:\n"
    "        ray.shutdown()\n"
    "        time.sleep(0.2)\n"
    "for line in sys.stdin:\n"
    "    while True:\n"
    "        nodes = ray.nodes()\n"
    "        if sum(1 for n in nodes if n['Alive']) >= int(line):\n"
    "            break\n"
    "        time.sleep(0.1)\n"
    "    print(json.dumps([n['NodeManagerAddress'] for n in nodes]), flush=True)\n"
)


class RayNode:
    """One ``ray start --block`` process (under a watchdog) and what it spawned."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        with open(log, "w") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG, RAY, "start", "--block", "--disable-usage-stats", *args],
                stdin=subprocess.PIPE,
                stdout=fh,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group: never mixed with the test's
            )
        self.pids: set[int] = {self.proc.pid}

    def remember(self) -> set[int]:
        """Record the node's current process tree (Ray's workers start later than the node)."""
        self.pids |= set(descendants(self.proc.pid))
        return self.pids

    def kill(self) -> None:
        """SIGKILL every process of this node (the pids it started), as a machine loss would."""
        self.remember()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        for pid in sorted(self.pids, reverse=True):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)


class RayCluster:
    """A head and one worker node on loopback; use as a context manager (always torn down)."""

    def __init__(self, *, env: dict[str, str], head_cpus: int = 1, worker_cpus: int = 1) -> None:
        self.env = {
            **env,
            # A token in ~/.ray (left by another tool) would switch the head to token auth while
            # drivers stay without one: this cluster is loopback-only and runs without.
            "RAY_AUTH_MODE": "disabled",
            # Notice a dead node in about a second and a half rather than Ray's default ~30 s.
            "RAY_health_check_initial_delay_ms": "500",
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "500",
            "RAY_health_check_failure_threshold": "3",
        }
        self.head_cpus = head_cpus
        self.worker_cpus = worker_cpus
        # Short: Ray's socket paths live under it and Unix socket paths are limited to 107 bytes.
        self.temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.head: RayNode | None = None
        self.worker: RayNode | None = None
        self._watcher: subprocess.Popen[str] | None = None

    def _ports(self) -> list[str]:
        return [
            "--node-ip-address", "127.0.0.1",
            "--object-store-memory", "200000000",
            "--dashboard-agent-listen-port", str(free_port()),
            "--metrics-export-port", str(free_port()),
            "--runtime-env-agent-port", str(free_port()),
        ]  # fmt: skip

    def start(self, timeout_s: float = 90.0) -> RayCluster:
        """Start both nodes and wait until the cluster reports two live nodes."""
        self.head = RayNode(
            [
                "--head",
                "--port",
                str(self.port),
                "--num-cpus",
                str(self.head_cpus),
                "--include-dashboard",
                "false",
                "--temp-dir",
                str(self.temp),
                *self._ports(),
            ],
            self.env,
            self.temp / "head.log",
        )
        # The worker node needs only the head's GCS, which listens within a few seconds; the
        # head's dashboard and raylet start meanwhile, so the two nodes start side by side.
        self._wait_gcs(timeout_s)
        self.worker = RayNode(
            [
                "--address",
                self.address,
                "--num-cpus",
                str(self.worker_cpus),
                "--resources",
                json.dumps({"worker_node": 1}),
                *self._ports(),
            ],
            self.env,
            self.temp / "worker.log",
        )
        self._wait_nodes(2, timeout_s)
        return self

    def _ask(self, n: int, timeout_s: float) -> list[str]:
        """Wait until ``n`` nodes are alive; the address of every node (live or dead) then.

        One watcher process (:data:`_WATCHER`) connects to the cluster once, when its GCS is up,
        and answers each question by polling the GCS's node table every 0.1 s; a fresh driver
        per question would import and connect again each time (seconds each)."""
        if self._watcher is None:
            with open(self.temp / "watcher.log", "w") as log:
                self._watcher = subprocess.Popen(
                    [sys.executable, "-c", _WATCHER, self.address],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    env=self.env,
                    text=True,
                )
        watcher = self._watcher
        assert watcher.stdin is not None and watcher.stdout is not None
        watcher.stdin.write(f"{n}\n")
        watcher.stdin.flush()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for node in (self.head, self.worker):
                if node is not None and node.proc.poll() is not None:
                    raise RuntimeError(f"ray start exited: {node.log.read_text()[-3000:]}")
            if watcher.poll() is not None:
                err = (self.temp / "watcher.log").read_text()[-3000:]
                raise RuntimeError(f"the cluster watcher exited ({watcher.returncode}): {err}")
            if select.select([watcher.stdout], [], [], 0.1)[0]:
                line = watcher.stdout.readline()
                if line.strip():
                    return list(json.loads(line))
                watcher.wait(timeout=10)  # end of its output: it exited
        raise TimeoutError(
            f"the Ray cluster did not reach {n} live node(s) within {timeout_s:g}s; the watcher's "
            f"log ends: {(self.temp / 'watcher.log').read_text()[-3000:]}"
        )

    def node_addresses(self) -> list[str]:
        """The address every node of the cluster (live or dead) reports, as the GCS lists them."""
        return self._ask(0, 60.0)

    def _wait_gcs(self, timeout_s: float) -> None:
        """Wait until the head's GCS accepts connections on its port."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.head is not None and self.head.proc.poll() is not None:
                raise RuntimeError(f"ray start exited: {self.head.log.read_text()[-3000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.1)
        raise TimeoutError(f"the head's GCS did not listen on {self.address} within {timeout_s:g}s")

    def _wait_nodes(self, n: int, timeout_s: float) -> None:
        self._ask(n, timeout_s)

    def stop(self) -> None:
        """Kill both nodes' processes (only those started here) and remove the temp dir."""
        if self._watcher is not None:
            self._watcher.kill()
            self._watcher.communicate()
        for node in (self.worker, self.head):
            if node is not None:
                node.kill()
        shutil.rmtree(self.temp, ignore_errors=True)

    def __enter__(self) -> RayCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
