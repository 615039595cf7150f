"""Run a command in a private network namespace where only the loopback interface exists.

Ray maps ``127.0.0.1`` to the machine's own interface address when it finds one, so a "local"
Ray instance talks over the machine's external address. In a fresh network namespace with only
``lo`` up there is no other address to find, and every Ray process binds to 127.0.0.1. Tests
and benchmarks that start Ray therefore run there: ``python -I tests/netns.py -- CMD ...`` is the
shell's ``unshare -n sh -c 'ip link set lo up && exec CMD ...'`` without needing util-linux or
iproute2 (it calls ``unshare(2)`` and sets ``lo``'s flags itself). Making a network namespace
needs root (CAP_SYS_ADMIN); :func:`namespace_problem` says why it cannot be made, when it cannot.

Pytest side (tests/conftest.py): a test marked ``@pytest.mark.netns`` is run again in a child
pytest inside such a namespace; the parent only reports the child's outcome.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def interfaces() -> list[str]:
    """The network interfaces of this process's namespace (not /sys, which shows its mounter's)."""
    return sorted(name for _, name in socket.if_nameindex())


def in_loopback_namespace() -> bool:
    """True when ``lo`` is the only interface this process can reach the network through."""
    return interfaces() == ["lo"]


def _enter() -> None:
    """Move this process into a new network namespace and bring its ``lo`` up."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWNET): {os.strerror(err)}")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def command(argv: list[str]) -> list[str]:
    """``argv`` wrapped so that it runs in a new loopback-only network namespace."""
    return [sys.executable, "-I", str(HERE), "--", *argv]  # -I: not tests/ on sys.path (tests/types)


_problem: list[str | None] = []


def namespace_problem() -> str | None:
    """Why a loopback-only namespace cannot be made here (checked once, in a child); None if it can."""
    if _problem:
        return _problem[0]
    why: str | None = None
    if not sys.platform.startswith("linux"):
        why = f"network namespaces are a Linux feature (this is {sys.platform})"
    else:
        probe = "import socket; print(' '.join(sorted(n for _, n in socket.if_nameindex())))"
        try:
            out = subprocess.run(
                command([sys.executable, "-c", probe]), capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = f"could not run the namespace helper: {exc}"
        else:
            if out.returncode != 0 or out.stdout.split() != ["lo"]:
                why = (
                    "cannot make a loopback-only network namespace (needs root or CAP_SYS_ADMIN): "
                    + (out.stderr.strip().splitlines() or [out.stdout.strip()])[-1]
                )
    _problem.append(why)
    return why


def main(argv: list[str]) -> int:
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: python -I tests/netns.py -- COMMAND [ARG ...]", file=sys.stderr)
        return 2
    try:
        _enter()
    except OSError as exc:
        print(f"netns: {exc} (a network namespace needs root or CAP_SYS_ADMIN)", file=sys.stderr)
        return 125
    os.execvp(argv[0], argv)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
