"""The Holm family of a report: the paper's by default, or chosen with --compare."""

from __future__ import annotations

import inspect

import pytest

from eviseek.eval.families import PAPER_SEED, choose_family, paper_pairs
from eviseek.eval.metrics import QuestionKey, SystemResults, paired_comparisons


def _systems(runs: list[str], agents: list[str]) -> list[SystemResults]:
    qs = [QuestionKey(id="q0", family="F", subcategory="S")]
    return [SystemResults(label=f"{r} / {a}", agent=a, run=r, questions=qs) for r in runs for a in agents]


def test_the_paper_family_is_eviseek_against_each_baseline_per_backbone() -> None:
    systems = _systems(["qwen", "gemini"], ["passive", "single-model", "eviseek", "eviseek:no_board"])
    family = choose_family(systems)
    assert family.name == "paper"
    # Four comparisons for two backbones, as in the paper; the ablation is neither side.
    assert family.pairs == [
        ("qwen / eviseek", "qwen / passive"),
        ("qwen / eviseek", "qwen / single-model"),
        ("gemini / eviseek", "gemini / passive"),
        ("gemini / eviseek", "gemini / single-model"),
    ]
    assert PAPER_SEED == 20261012
    assert inspect.signature(paired_comparisons).parameters["seed"].default == PAPER_SEED


def test_without_eviseek_the_default_falls_back_to_all_pairs_and_says_so() -> None:
    systems = _systems(["m"], ["passive", "single-model"])
    assert paper_pairs(systems) == []
    family = choose_family(systems, None)
    assert family.name == "all" and "no member" in family.description
    assert family.pairs == [("m / single-model", "m / passive")]


def test_explicit_pairs_may_hold_colons_in_labels() -> None:
    systems = _systems(["m"], ["passive", "eviseek", "eviseek:no_board"])
    family = choose_family(systems, "m / eviseek:no_board:m / eviseek, m / eviseek:m / passive")
    assert family.name == "custom"
    assert family.pairs == [("m / eviseek:no_board", "m / eviseek"), ("m / eviseek", "m / passive")]
    with pytest.raises(ValueError, match="not two known systems"):
        choose_family(systems, "m / eviseek:m / blind")
    with pytest.raises(ValueError, match="listed twice"):
        choose_family(systems, "m / eviseek:m / passive,m / eviseek:m / passive")
    with pytest.raises(ValueError, match="give 'paper'"):
        choose_family(systems, ",")
