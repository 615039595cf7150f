"""``python -m eviseek ARGS`` as real processes without paying the CLI's imports for each one.

A test that checks many command lines (bad flags, usage errors) spends nearly all of each process
importing ``eviseek.cli.main``. :class:`PreloadedCli` starts one Python process that imports it
once and then forks a child per command line. The child is an ordinary process: it gets the
environment, working directory and ``sys.argv`` that ``python -m eviseek`` would get, runs
``eviseek/__main__.py`` with :mod:`runpy` as ``-m`` does, writes to its own stdout and stderr
(files here) and ends the way Python ends a program (exit code from ``SystemExit``, a traceback
and code 1 for any other exception, atexit handlers, flushed streams). So the exit code, the
output and any traceback are the ones a user would see; only the teardown of every module is
skipped. Whatever the import wrote to stderr (a warning, say) is written again at the start of
every child's stderr, as a fresh process would print it.

What differs from a fresh process: the modules ``eviseek.cli.main`` imports were imported with
the starting environment, so a variable read at import time keeps that value. Tests that set
such variables, and at least one check per file that is about the CLI as a whole, launch a
fresh process instead.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# The forking server. Requests and replies are JSON lines on its stdin and stdout.
_SERVER = r"""
import atexit, json, os, runpy, sys

# What importing the CLI prints on stderr goes to a file, read back and replayed per child.
_preamble_path = sys.argv[1]
sys.stderr.flush()
_saved_err = os.dup(2)
_fd = os.open(_preamble_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.dup2(_fd, 2)
os.close(_fd)
import eviseek.cli.main  # noqa: F401  (the point: imported once, before any fork)
sys.stderr.flush()
os.dup2(_saved_err, 2)
os.close(_saved_err)
with open(_preamble_path, "rb") as _f:
    _preamble = _f.read()

_proto_in, _proto_out = sys.stdin, os.fdopen(os.dup(1), "w")
_proto_out.write("ready\n")
_proto_out.flush()


def _child(req):
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, fd)
        os.close(out)
    os.write(2, _preamble)
    sys.path[0] = os.getcwd()  # as ``python -m`` sets it
    sys.argv = ["-m", *req["argv"]]


while True:
    line = _proto_in.readline()
    if not line:
        os._exit(0)
    req = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _proto_out = None
        _child(req)
        break  # run the command at top level, outside this loop
    _proto_out.write(json.dumps({"pid": pid}) + "\n")
    _proto_out.flush()
    _, status = os.waitpid(pid, 0)
    _proto_out.write(json.dumps({"rc": os.waitstatus_to_exitcode(status)}) + "\n")
    _proto_out.flush()

del _proto_in
# Python's own exit handling, less the teardown of every module (a few hundred ms of freeing
# objects that the server's other children still share): exit code from SystemExit, a
# traceback and code 1 for any other exception, atexit handlers, flushed streams.
try:
    runpy.run_module("eviseek", run_name="__main__", alter_sys=True)
    _code = 0
except SystemExit as _exit:
    if _exit.code is None:
        _code = 0
    elif isinstance(_exit.code, int):
        _code = _exit.code & 0xFF
    else:
        print(_exit.code, file=sys.stderr)
        _code = 1
except BaseException:
    sys.excepthook(*sys.exc_info())
    _code = 1
atexit._run_exitfuncs()
for _stream in (sys.stdout, sys.stderr):
    try:
        _stream.flush()
    except Exception:
        pass
os._exit(_code)
"""


class PreloadedCli:
    """Runs ``python -m eviseek ARGS`` in processes forked from one that imported the CLI."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = dict(os.environ if env is None else env)
        self._tmp = tempfile.TemporaryDirectory(prefix="eviseek-cli-")
        self._dir = Path(self._tmp.name)
        self._runs = 0
        self._server = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(self._dir / "preamble")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self._env,
            text=True,
        )
        self._select = selectors.DefaultSelector()
        assert self._server.stdout is not None
        self._select.register(self._server.stdout, selectors.EVENT_READ)
        if self._read(120) != "ready":
            self.close()
            raise RuntimeError("the preloaded CLI did not start")

    def _read(self, timeout: float) -> str:
        assert self._server.stdout is not None
        if not self._select.select(timeout):
            raise TimeoutError(f"no reply from the preloaded CLI in {timeout} s")
        line = self._server.stdout.readline()
        if not line:
            raise RuntimeError(f"the preloaded CLI exited ({self._server.poll()})")
        return line.strip()

    def run(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Like ``subprocess.run([python, "-m", "eviseek", *args], capture_output=True,
        text=True)`` with the environment ``env`` (default: the one given at start)."""
        assert self._server.stdin is not None
        self._runs += 1
        out, err = self._dir / f"{self._runs}.out", self._dir / f"{self._runs}.err"
        request = {
            "argv": list(args),
            "env": dict(self._env if env is None else env),
            "cwd": str(cwd if cwd is not None else os.getcwd()),
            "stdout": str(out),
            "stderr": str(err),
        }
        self._server.stdin.write(json.dumps(request) + "\n")
        self._server.stdin.flush()
        pid = json.loads(self._read(30))["pid"]
        try:
            rc = json.loads(self._read(timeout))["rc"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            raise
        return subprocess.CompletedProcess(
            [sys.executable, "-m", "eviseek", *args],
            rc,
            out.read_text(encoding="utf-8", errors="replace"),
            err.read_text(encoding="utf-8", errors="replace"),
        )

    def close(self) -> None:
        if self._server.stdin is not None:
            self._server.stdin.close()
        try:
            self._server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait()
        if self._server.stdout is not None:
            self._server.stdout.close()
        self._select.close()
        self._tmp.cleanup()

    def __enter__(self) -> PreloadedCli:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
