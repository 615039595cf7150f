"""No import cycle but the named ones: every cycle in the module import graph (lazy imports
included) must be one of the allow-list in docs/architecture.md ("Import cycles")."""

from __future__ import annotations

import re
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"


def allowed_cycles() -> list[frozenset[str]]:
    """The allow-list: each bullet of the doc's "Import cycles" section names one cycle's modules."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Import cycles", 1)[1].split("\n## ", 1)[0]
    bullets = [line for line in section.splitlines() if line.startswith("- `eviseek.")]
    return [frozenset(re.findall(r"`(eviseek[\w.]*)`", line.split(":", 1)[0])) for line in bullets]


def cycles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The modules of each import cycle (strongly connected component of two or more modules)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in edges:
        if root in index:
            continue
        # Tarjan's algorithm without recursion: (module, position in its edge list) frames.
        work = [(root, 0)]
        while work:
            module, i = work.pop()
            if i == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            targets = edges.get(module, [])
            if i < len(targets):
                work.append((module, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
    return found


def unexpected(found: list[frozenset[str]], allowed: list[frozenset[str]]) -> list[list[str]]:
    """Cycles that are not on the allow-list (a new one, or an allowed one that grew)."""
    return [sorted(c) for c in found if c not in allowed]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("eviseek", cache_dir=None)


def test_the_allow_list_names_the_two_known_cycles() -> None:
    allowed = allowed_cycles()
    assert len(allowed) == 2 and all(len(c) == 2 for c in allowed)
    assert frozenset({"eviseek.autotool.datasets", "eviseek.autotool.reasoning"}) in allowed


def test_no_cycle_but_the_named_ones(graph: grimp.ImportGraph) -> None:
    found = cycles(graph)
    assert unexpected(found, allowed_cycles()) == []
    # A cycle that was broken leaves a stale line in the doc: remove it there.
    assert [sorted(c) for c in allowed_cycles() if c not in found] == []


def test_an_added_cycle_fails() -> None:
    """The cycle the layer contracts let through (committer and Ray backend share one ':' layer
    of eval-layers): added to the real graph, the check reports it."""
    copy = grimp.build_graph("eviseek", cache_dir=None)
    copy.add_import(importer="eviseek.eval.committer", imported="eviseek.eval.ray_backend")
    copy.add_import(importer="eviseek.eval.ray_backend", imported="eviseek.eval.committer")
    assert unexpected(cycles(copy), allowed_cycles()) == [
        ["eviseek.eval.committer", "eviseek.eval.ray_backend"]
    ]
    # An allowed cycle that grows is a new cycle too.
    grown = grimp.build_graph("eviseek", cache_dir=None)
    grown.add_import(importer="eviseek.autotool.reasoning", imported="eviseek.autotool.parser")
    grown.add_import(importer="eviseek.autotool.parser", imported="eviseek.autotool.datasets")
    assert len(unexpected(cycles(grown), allowed_cycles())) == 1
