"""Which paired comparisons form the Holm family of a report.

Holm's correction depends on the set of tests corrected together, so the report names that set.
The paper (app. A, "Paired significance tests") compares EviSeek with each baseline separately
for each backbone and corrects across those comparisons (four for two backbones and two
baselines); its bootstrap uses seed 20261012. That is the report's default here. In a run of
answer-only replays (``eviseek replay``) the default pairs each memory variant with the board
replay, the reference of the paper's Table 3.

``--compare`` chooses another family: ``paper``, ``all`` (every pair of agents within a run,
then the same agent across runs; the report's default before this family existed), or an explicit
list ``A:B,C:D`` of system labels (the difference is A - B).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from eviseek.eval.metrics import SystemResults, default_pairs
from eviseek.eval.stats import PAPER_SEED

__all__ = ["PAPER_SEED", "ComparisonFamily", "choose_family", "paper_pairs"]

# Agents that are the method under test rather than a baseline (EviSeek and its navigation form).
_METHODS = ("eviseek", "eviseek-nav")


class ComparisonFamily(BaseModel):
    """The comparisons corrected together, and how they were chosen."""

    name: str
    """``paper``, ``all`` or ``custom``."""
    description: str
    pairs: list[tuple[str, str]]


def _base(agent: str) -> str:
    return agent.split(":", 1)[0]


def _is_method(system: SystemResults) -> bool:
    # Only the plain method: a variant with options (eviseek:no_board) is an ablation, not the
    # system the paper tests against its baselines.
    return system.agent in _METHODS


def _is_baseline(system: SystemResults) -> bool:
    return not _base(system.agent).startswith("eviseek")


def paper_pairs(systems: Sequence[SystemResults]) -> list[tuple[str, str]]:
    """EviSeek minus each baseline, within each run (one run per backbone), in listed order."""
    pairs: list[tuple[str, str]] = []
    for run in dict.fromkeys(s.run for s in systems):
        members = [s for s in systems if s.run == run]
        for method in (s for s in members if _is_method(s)):
            pairs += [(method.label, b.label) for b in members if _is_baseline(b)]
        # Answer-only replays (eviseek replay): each memory variant against the board replay of
        # the same trajectories, as the paper's Table 3 measures its memory ablations.
        for ref in (s for s in members if s.agent.endswith("-replay-board")):
            stem = ref.agent[: -len("board")]
            pairs += [(v.label, ref.label) for v in members if v.agent.startswith(stem) and v is not ref]
    return pairs


class CompareError(ValueError):
    """``--compare`` names no valid family (unknown systems, a system against itself, a pair twice):
    a usage error, which the CLI reports with exit code 2."""


def _split_pair(item: str, labels: Sequence[str]) -> tuple[str, str]:
    # Labels may hold ':' themselves (eviseek:no_board), so try every ':' as the separator.
    cuts = [i for i, ch in enumerate(item) if ch == ":"]
    found = [(item[:i].strip(), item[i + 1 :].strip()) for i in cuts]
    known = [(a, b) for a, b in found if a in labels and b in labels]
    if len(known) == 1:
        return known[0]
    if not known:
        raise CompareError(
            f"--compare: {item!r} is not two known systems written A:B; known systems: {', '.join(labels)}"
        )
    raise CompareError(f"--compare: {item!r} can be read as more than one pair; write it another way")


def choose_family(systems: Sequence[SystemResults], compare: str | None = None) -> ComparisonFamily:
    """The family named by ``compare`` (``None`` means the paper's; see the module docstring)."""
    labels = [s.label for s in systems]
    spec = "paper" if compare is None else compare.strip()
    if spec == "paper":
        pairs = paper_pairs(systems)
        if pairs:
            return ComparisonFamily(
                name="paper",
                description="the paper's: EviSeek against each baseline, separately per run (backbone); "
                "memory replays against the board replay",
                pairs=pairs,
            )
        return ComparisonFamily(
            name="all",
            description="every pair of agents within a run and each agent across runs "
            "(the paper's family, EviSeek against each baseline, has no member here)",
            pairs=default_pairs(systems),
        )
    if spec == "all":
        return ComparisonFamily(
            name="all",
            description="every pair of agents within a run and each agent across runs",
            pairs=default_pairs(systems),
        )
    items = spec.split(",")
    if not spec.strip() or any(not item.strip() for item in items):
        # An empty item is a typo ('A:B,,'), never a comparison meant: refused, not skipped.
        raise CompareError(f"--compare {spec!r}: give 'paper', 'all' or pairs A:B,C:D (no empty pair)")
    pairs = [_split_pair(item, labels) for item in items]
    same = [a for a, b in pairs if a == b]
    if same:
        raise CompareError(f"--compare: {same[0]}:{same[0]} compares a system with itself; name two systems")
    if len({frozenset(p) for p in pairs}) != len(pairs):
        raise CompareError(
            "--compare: a pair is listed twice (A:B and B:A are the same comparison); each comparison "
            "counts once in the Holm family"
        )
    return ComparisonFamily(name="custom", description="the pairs given with --compare", pairs=pairs)
