"""The README stays short and keeps the command CI runs.

Long material belongs on the documentation site (docs/); the README says what eviseek is, how to
set it up and run the demo and the tests, how to point it at a VLM, one small results table and
where to go next.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 160


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move detail to a page under docs/"


def test_readme_shows_the_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    last = [line.strip() for line in ci if line.strip() and not line.lstrip().startswith("#")][-1]
    assert last in README.read_text(encoding="utf-8")


def test_readme_links_the_guide() -> None:
    text = README.read_text(encoding="utf-8")
    for page in ("docs/getting-started.md", "docs/tutorials/evaluate-your-vlm.md", "docs/results.md"):
        assert f"]({page})" in text, page
