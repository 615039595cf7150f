"""Every command and code block of the getting-started page and the tutorials runs.

Each page runs as one bash script in its own scratch directory (so the pages run in parallel
workers without sharing files), its blocks in page order, with ``set -euo pipefail``: a command
that fails, or a Python block that raises, fails the page's test and names the block's line.
``tests/docs/runnable.py`` says how a page marks a block it cannot run here (with the reason) and
how a test swaps a full-size setting for a small one.

Two replacements apply to every page, so the pages can show what a user types:
- ``http://localhost:8000/v1`` (the usual address of a vLLM server) is a real OpenAI-compatible
  server on 127.0.0.1 that this test starts (``eviseek.testing.openai_server``); it answers every
  request with one fixed reply, so the commands run end to end without a VLM, and scores from it
  mean nothing.
- Port ``8731`` (``eviseek env serve``'s default) is a free port, so two pages never collide.

The scratch directory has links to the repository's ``examples``, ``scripts``, ``benchmarks``
and ``tests`` folders and to ``.venv``, so paths on the pages resolve as they do in a checkout;
``eviseek`` and ``python`` are the checkout's. Tabletop splits come from the usual cache, shared
with the other tests.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from eviseek.testing.openai_server import OpenAITestServer
from tests.docs.runnable import Block, blocks

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "getting-started.md", *sorted((ROOT / "docs" / "tutorials").glob("*.md"))]
VLM_URL = "http://localhost:8000/v1"
ENV_PORT = "8731"
LINKED = ("examples", "scripts", "benchmarks", "tests", ".venv")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _reply(request: dict) -> str:
    # One fixed, well-formed reply: enough for every stage to parse an answer.
    return '{"answer": "yes", "reasoning": "a fixed reply from the test server"}'


def _script(page_blocks: list[Block], work: Path, vlm_url: str, port: int) -> str:
    lines = [
        "set -euo pipefail",
        # Anything a page left running in the background stops with the script.
        "trap 'jobs -p | xargs -r kill 2>/dev/null || true' EXIT",
    ]
    for block in page_blocks:
        if block.not_run is not None:
            continue
        code = block.to_run().replace(VLM_URL, vlm_url).replace(ENV_PORT, str(port))
        where = f"{block.page.relative_to(ROOT)}:{block.line}"
        lines.append(f'echo "::: {where} (at ${{SECONDS}} s)" >&2')
        if block.language == "bash":
            lines.append(code)
        elif block.snippet is not None:
            lines.append(f"python {shlex.quote(str(ROOT / block.snippet))}")
        else:
            path = work / f"_block_{block.line}.py"
            path.write_text(code, encoding="utf-8")
            lines.append(f"python {shlex.quote(path.name)}")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.timeout(600)  # a page runs several commands; under a loaded CI machine 300 s is tight
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_page_runs(page: Path, tmp_path: Path) -> None:
    page_blocks = blocks(page)
    assert [b for b in page_blocks if b.not_run is None], f"{page.name} has no block that runs"
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        if (ROOT / name).exists():
            (work / name).symlink_to(ROOT / name)
    env = dict(os.environ)
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT / "src")
    env["COLUMNS"] = "120"
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    with OpenAITestServer(_reply) as srv:
        script = _script(page_blocks, work, srv.base_url, _free_port())
        proc = subprocess.Popen(
            ["bash", "-c", script],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=560)
        finally:
            # Whatever is still running in the page's session (a server started with &) stops here.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    last = [line for line in out.splitlines() if line.startswith("::: ")]
    print("\n".join(last))  # where the time went, shown with -s or -rP
    assert proc.returncode == 0, f"failed in {last[-1][4:] if last else page.name}:\n{out[-6000:]}"


def test_every_block_left_out_says_why() -> None:
    skipped = [b for page in PAGES for b in blocks(page) if b.not_run is not None]
    for b in skipped:
        assert len(b.not_run or "") >= 10, f"{b.page.name}:{b.line}: say why the block is not run"
    # Nearly everything runs: the blocks left out are the ones that need a GPU, a cluster,
    # a real VLM or a network.
    total = sum(len(blocks(page)) for page in PAGES)
    assert len(skipped) <= total // 2, [f"{b.page.name}:{b.line}" for b in skipped]


def test_replacements_name_text_of_their_block() -> None:
    for page in PAGES:
        for block in blocks(page):
            block.to_run()  # raises when a replacement's text is not in its block


OTHER_PAGES = sorted(
    p
    for p in (ROOT / "docs").rglob("*.md")
    if p not in PAGES and any(b.language == "python" for b in blocks(p))
)


@pytest.mark.slow
@pytest.mark.parametrize("page", OTHER_PAGES, ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_python_blocks_of_the_other_pages_run(page: Path, tmp_path: Path) -> None:
    """The reference pages' Python examples run too, each block on its own (their shell blocks
    show commands at full size and are not run; the tutorials run theirs)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for block in blocks(page):
        if block.language != "python" or block.not_run is not None:
            continue
        path = tmp_path / f"block_{block.line}.py"
        # A block that only includes a file runs that file, as the page shows it.
        code = (ROOT / block.snippet).read_text(encoding="utf-8") if block.snippet else block.to_run()
        path.write_text(code, encoding="utf-8")
        proc = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "python"), str(path)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, f"{page.relative_to(ROOT)}:{block.line}:\n{proc.stderr[-3000:]}"


_STATED = re.compile(r"(\d+) of (?:its|this page's) (\d+) command\s+blocks\s+runs?\s+in\s+the\s+test\s+suite")
_README_STATED = re.compile(
    r"(\d+) of the (\d+) command\s+blocks\s+of\s+Getting\s+started\s+and\s+the\s+tutorials"
    r"\s+run\s+in\s+the\s+test\s+suite"
)


def _counts(page: Path) -> tuple[int, int]:
    found = blocks(page)
    return sum(b.not_run is None for b in found), len(found)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_each_page_states_how_many_of_its_blocks_run(page: Path) -> None:
    """A page says how many of its blocks the test runs, and the count is the test's own: a
    block newly marked ``not run`` (or a new block) fails here until the sentence is updated."""
    stated = _STATED.findall(page.read_text(encoding="utf-8"))
    assert len(stated) == 1, f"{page.name}: say once 'N of its M command blocks run in the test suite'"
    assert tuple(int(x) for x in stated[0]) == _counts(page)


def test_the_readme_states_how_many_tutorial_blocks_run() -> None:
    run = sum(_counts(p)[0] for p in PAGES)
    total = sum(_counts(p)[1] for p in PAGES)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = _README_STATED.findall(readme)
    assert [tuple(int(x) for x in s) for s in stated] == [(run, total)]
    assert f"the {total - run} others" in " ".join(readme.split())
