"""Shared helpers of the documentation tests: build the site once, serve it on loopback."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


# The repository address the test builds with (mkdocs.yml reads EVISEEK_REPO_URL): not a GitHub
# or GitLab host, whose repository facts the theme would fetch from the network.
REPO_URL = "https://git.example.org/eviseek"


def site_env(repo_url: str | None = REPO_URL) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("EVISEEK_REPO_URL", None)
    if repo_url:
        env["EVISEEK_REPO_URL"] = repo_url
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["NO_MKDOCS_2_WARNING"] = "1"  # the theme's notice about its successor, not a problem of ours
    return env


def build_site(dest: Path, repo_url: str | None = REPO_URL) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the repository's site into ``dest`` (nothing written in the tree),
    with ``repo_url`` as the repository's address (``None``: none, so no edit links)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(dest),
        ],
        cwd=ROOT,
        env=site_env(repo_url),
        capture_output=True,
        text=True,
        timeout=240,
    )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) and yield its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
