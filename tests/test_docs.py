"""Every file the README and docs/*.md point at is a file of this repository.

A doc points at a file in two ways: a Markdown link ``[text](path)`` (resolved from the doc's
folder) and a code span naming a file (`` `agents/eviseek/replay.py` ``), which may be written from
the repository root or from any package folder, so it must match the end of some file's path.
Names of files that a run writes (``trajectory.json``, ``RUN_DIR/support.jsonl``) and files of
other projects are listed below with the reason; nothing else is let through.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
_TREES = ("src", "tests", "docs", "benchmarks", "examples", "scripts")

# Files a run or a command writes, named in prose; they are outputs, not repository files.
RUN_OUTPUTS = {
    "trajectory.json",
    "questions.jsonl",
    "run.json",
    "index.html",
    "report.md",
    "summary.json",
    "heldout.json",  # the AutoTool learning run's held-out scores, per model folder
    "run_time.json",  # the AutoTool learning run's CPU and wall time, per seed folder
    "results.csv",
    "report/index.html",
    "autotool_summary.json",
    "RUN_DIR/support.jsonl",
    "RUN_DIR/express.jsonl",
    "OUTPUT_DIR/amb.jsonl",
    "OUTPUT_DIR/prompts.jsonl",
    "OUTPUT_DIR/mode_cost.jsonl",
}
# Files of other projects, named when saying where a rule comes from.
OTHER_PROJECTS = {
    "evaluation.py",  # EXPRESS-Bench's scorer
    "ppo_trainer.yaml",  # verl's trainer defaults, named for its constant actor learning rate
    "data/express-bench.json",  # EXPRESS-Bench's question file
    "prompt/evaluation.txt",  # EXPRESS-Bench's judge prompt, read from the user's checkout
    "Family/Subcategory/scene/room/file.json",  # ESI-Bench's answer-file layout
    "src/active_explore/pipeline.py",  # ESI-Bench's runner, named by the bridge to it
}
# Paths that would name files kept outside the repository (the project's private notes).
OUTSIDE = ("REFERENCE.md", "seeds/", "shared/", "DESIGN.md")

_SPAN = re.compile(r"`([A-Za-z0-9_./-]+\.(?:py|md|j2|yaml|yml|sh|txt|toml|json|jsonl|html|cfg|csv))`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@functools.cache
def _repo_files() -> list[str]:
    files = [p.name for p in ROOT.iterdir() if p.is_file()]
    for tree in _TREES:
        files += [p.relative_to(ROOT).as_posix() for p in (ROOT / tree).rglob("*") if p.is_file()]
    return files


def _missing(doc: Path, files: list[str]) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    bad: list[str] = []
    for m in _LINK.finditer(text):
        target = m.group(1).split("#", 1)[0]
        if not target or "://" in target or target.startswith("mailto:"):
            continue
        if not (doc.parent / target).exists():
            bad.append(f"link {target}")
    for m in _SPAN.finditer(text):
        name = m.group(1).lstrip("./")
        if name in RUN_OUTPUTS or name in OTHER_PROJECTS:
            continue
        if not any(f == name or f.endswith("/" + name) for f in files):
            bad.append(f"file {name}")
    bad += [f"outside the repo: {o}" for o in OUTSIDE if o in text]
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_a_doc_names_exists(doc: Path) -> None:
    assert _missing(doc, _repo_files()) == []


def test_the_check_catches_a_missing_file(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(
        "See `agents/eviseek/replay.py`, `agents/eviseek/nowhere.py`, [a](missing.md), "
        "[b](https://example.org/x.md) and REFERENCE.md.\n",
        encoding="utf-8",
    )
    assert _missing(doc, _repo_files()) == [
        "link missing.md",
        "file agents/eviseek/nowhere.py",
        "outside the repo: REFERENCE.md",
    ]


# A repository path written out in full, from the root, anywhere in a file's text (docstrings and
# comments included, backticked or not).
_ROOTED = re.compile(
    r"(?<![\w/.-])((?:docs|scripts|benchmarks|examples|tests|src)/[A-Za-z0-9_./-]*[A-Za-z0-9_-]"
    r"\.(?:md|py|sh|ya?ml|json|jsonl|png|svg|toml))"
)
# A component in capitals is a placeholder (docs/results/NAME.json), not a file.
_PLACEHOLDER = re.compile(r"(?:^|/)[A-Z_]+(?:\.|/|$)")
SOURCES = [
    *sorted((ROOT / "src").rglob("*.py")),
    *sorted((ROOT / "scripts").rglob("*.py")),
    *sorted((ROOT / "benchmarks").rglob("*.py")),
    *DOCS,
    ROOT / "mkdocs.yml",
]


def _missing_rooted(path: Path) -> list[str]:
    return [
        m.group(1)
        for m in _ROOTED.finditer(path.read_text(encoding="utf-8"))
        if not (ROOT / m.group(1)).exists()
        and m.group(1) not in OTHER_PROJECTS
        and not _PLACEHOLDER.search(m.group(1))
    ]


def test_every_repository_path_a_docstring_or_page_names_exists() -> None:
    """``EnvServer``'s docstring named docs/remote.md, which never existed: a path written from the
    repository's root, in code or in a page, must be a file of the repository."""
    bad = {p.relative_to(ROOT).as_posix(): _missing_rooted(p) for p in SOURCES}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_rooted_path_check_catches_a_missing_page(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Limits (docs/remote.md lists them); docs/scale.md, docs/results/NAME.json."""\n')
    assert _missing_rooted(module) == ["docs/remote.md"]
