"""Read the runnable blocks of a documentation page.

A page's fenced ```` ```bash ```` and ```` ```python ```` blocks are run by
``tests/docs/test_tutorials.py``, in order, in one scratch directory per page. Two HTML comments,
invisible on the site, steer a block; each is one line, just above the block (blank lines
between are allowed):

- ``<!-- not run: REASON -->`` leaves the block out (it needs a GPU, a cluster, a real VLM, or it
  installs packages). The reason is required and the test lists every such block.
- ``<!-- test: OLD => NEW -->`` replaces text in the block before it runs, so the page can show
  the full command while the test runs it with small limits (``eviseek demo =>
  eviseek demo --limit 2``). Several may stack.

A Python block whose only line is a snippet include (``--8<-- "examples/plugins/x.py"``) runs the
included file. Blocks in other languages (``text``, ``yaml``, ``json``, ``console``) are shown,
never run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>```+)(?P<info>[^\n`]*)$")
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<reason>.*?)\s*-->", re.S)
_TEST = re.compile(r"<!--\s*test:\s*(?P<old>.*?)\s*=>\s*(?P<new>.*?)\s*-->", re.S)
_SNIPPET = re.compile(r'^--8<--\s+"(?P<path>[^"]+)"$')
RUN_LANGUAGES = ("bash", "python")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    not_run: str | None = None
    replacements: list[tuple[str, str]] = field(default_factory=list)

    @property
    def snippet(self) -> str | None:
        """The repository file a snippet-only block includes, else None."""
        m = _SNIPPET.match(self.code.strip())
        return m.group("path") if m else None

    def to_run(self) -> str:
        code = self.code
        for old, new in self.replacements:
            if old not in code:
                raise ValueError(f"{self.page.name}:{self.line}: test replacement {old!r} not in the block")
            code = code.replace(old, new)
        return code


def blocks(page: Path) -> list[Block]:
    """The bash and python blocks of ``page`` with their directives, in page order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m.group("fence"), m.group("indent")
        language = m.group("info").strip().split(" ", 1)[0].lstrip(".").lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if language not in RUN_LANGUAGES:
            continue
        # The comments just above the block (blank lines between are allowed).
        j = start - 1
        above: list[str] = []
        while j >= 0 and (lines[j].strip() == "" or _one_line_comment(lines[j])):
            above.insert(0, lines[j])
            j -= 1
        head = "\n".join(above)
        not_run = _NOT_RUN.search(head)
        found.append(
            Block(
                page=page,
                line=start + 1,
                language=language,
                code="\n".join(body) + "\n",
                not_run=not_run.group("reason") if not_run else None,
                replacements=[(t.group("old"), t.group("new")) for t in _TEST.finditer(head)],
            )
        )
    return found


def _one_line_comment(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("<!--") and stripped.endswith("-->")
