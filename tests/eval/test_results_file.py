"""Results files: per-slice accuracy and C with bootstrap intervals, from a run directory."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eviseek.eval.results_file import (
    bootstrap_mean,
    file_sha256,
    read_results_file,
    summarize_run,
)

from .synthetic import make_questions, write_run


def _verdict(agent: str, i: int) -> tuple[bool | None, float | None, str | None]:
    if agent == "passive":
        return (i % 3 == 0, 0.0 if i % 2 else 0.5, None)
    if i == 7:
        return (None, None, "TimeoutError: the episode took too long")  # counts wrong, ungraded
    return (i % 4 != 1, 1.0 if i % 2 == 0 else 0.5, None)


def test_a_run_summarised_per_family_with_intervals(tmp_path: Path) -> None:
    qs = make_questions(24)
    run = write_run(tmp_path / "run", "openai/m", ["passive", "eviseek"], qs, _verdict)
    config = json.loads((run / "run.json").read_text(encoding="utf-8"))
    config["created_at"] = 1796600000.0  # the run started on 2026-12-06 (UTC)
    (run / "run.json").write_text(json.dumps(config), encoding="utf-8")
    res = summarize_run(run, name="synthetic", slice_level="family", c_metric="support", n_resamples=4000)
    assert res.measured == "2026-12-06"
    assert [a.agent for a in res.agents] == ["passive", "eviseek"]
    assert res.model == "openai/m" and res.n_questions == 24
    eviseek = res.agent("eviseek")
    # Slices follow the benchmark's order (ESI-Bench's taxonomy here), each once.
    names = [s.name for s in eviseek.slices]
    assert sorted(names) == ["Enumerative Perception", "Perceptual Grounding", "Spatial Relations"]
    assert sum(s.n for s in eviseek.slices) == eviseek.overall.n == 24
    # The numbers are the run's: recount them from the verdicts.
    right = [i for i in range(24) if i != 7 and i % 4 != 1]
    assert eviseek.overall.correct == len(right)
    assert eviseek.overall.accuracy.value == pytest.approx(100 * len(right) / 24, abs=1e-3)
    # C is over the graded questions, as the report's: the failed episode 7 showed images but
    # was never graded, so it is left out rather than counted as unsupported.
    c = [100.0 * (1.0 if i % 2 == 0 else 0.5) if i in right else 0.0 for i in range(24) if i != 7]
    assert eviseek.overall.C is not None
    assert eviseek.overall.C.value == pytest.approx(float(np.mean(c)), abs=1e-3)
    for s in [*eviseek.slices, eviseek.overall]:
        assert s.accuracy.low <= s.accuracy.value <= s.accuracy.high
        assert s.C is not None and s.C.low <= s.C.value <= s.C.high
    # A saved file reads back the same.
    path = tmp_path / "r.json"
    path.write_text(res.model_dump_json(indent=1), encoding="utf-8")
    assert read_results_file(path) == res
    assert len(file_sha256(path)) == 64


def test_express_c_comes_from_the_judge_grades_and_skips_agents_that_never_look(tmp_path: Path) -> None:
    qs = make_questions(8)
    run = write_run(
        tmp_path / "run", "reference", ["blind", "eviseek-nav"], qs, lambda a, i: (i % 2 == 0, None, None)
    )
    # Blind never moved and showed no image; the synthetic writer gives every episode images,
    # so rewrite Blind's results as a question-only agent's.
    for q in qs:
        ep = run / "episodes" / "blind" / q.id / "trajectory.json"
        data = json.loads(ep.read_text(encoding="utf-8"))
        data["answer_images"], data["answer_frame_ids"] = [], []
        data["result"]["images_in_answer"], data["result"]["steps"] = 0, 0
        ep.write_text(json.dumps(data), encoding="utf-8")
    grades = [
        {
            "agent": "eviseek-nav",
            "question_id": q.id,
            "grounding": 1.0 if i < 4 else 0.5,
            "score": 5 if i % 2 == 0 else 1,
        }
        for i, q in enumerate(qs)
    ]
    grades.append({"agent": "blind", "question_id": qs[0].id, "grounding": 0.0, "score": 3})
    (run / "express.jsonl").write_text("".join(json.dumps(g) + "\n" for g in grades), encoding="utf-8")
    res = summarize_run(run, name="h", slice_level="subcategory", c_metric="express", n_resamples=2000)
    nav = res.agent("eviseek-nav")
    expected = [100.0 * g["grounding"] * g["score"] / 5 for g in grades[:-1]]
    assert nav.overall.C is not None and nav.overall.C.value == pytest.approx(
        float(np.mean(expected)), abs=1e-3
    )
    assert res.agent("blind").overall.C is None  # as the report's dash
    assert {s.name for s in nav.slices} == {q.subcategory for q in qs}


def test_express_without_grades_says_how_to_get_them(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "run", "reference", ["eviseek-nav"], make_questions(4), lambda a, i: (True, None, None)
    )
    with pytest.raises(ValueError, match="eviseek judge"):
        summarize_run(run, name="h", slice_level="subcategory", c_metric="express")


def test_bootstrap_interval_of_a_mean() -> None:
    flat = bootstrap_mean([50.0] * 10, n_resamples=500, seed=1, confidence=0.95)
    assert (flat.low, flat.value, flat.high) == (50.0, 50.0, 50.0)
    values = [100.0] * 30 + [0.0] * 70
    est = bootstrap_mean(values, n_resamples=20_000, seed=3, confidence=0.95)
    # The normal approximation of a proportion's interval: 30 +- 1.96 * sqrt(0.3 * 0.7 / 100).
    half = 196 * (0.3 * 0.7 / 100) ** 0.5
    assert est.value == 30.0
    assert est.low == pytest.approx(30 - half, abs=1.5) and est.high == pytest.approx(30 + half, abs=1.5)
    assert bootstrap_mean(values, n_resamples=2000, seed=3, confidence=0.95) == bootstrap_mean(
        values, n_resamples=2000, seed=3, confidence=0.95
    )
    with pytest.raises(ValueError):
        bootstrap_mean([], n_resamples=10, seed=0, confidence=0.95)


def test_kinds_the_taxonomy_does_not_rank_keep_the_runs_order_in_every_process(tmp_path: Path) -> None:
    """The houses' Open EQA kinds are not in the paper's Table 5, so they tie in the taxonomy's
    order; they used to follow a set's order, which string hashing changes from one process to
    the next, so two summaries of one run differed (and the chart with them)."""
    import os
    import subprocess
    import sys

    kinds = ["Object Location", "Existence", "Counting in a Room", "Object Attribute", "Object Relation"]
    qs = [
        q.model_copy(
            update={"family": "Open EQA", "subcategory": kinds[i % len(kinds)], "benchmark": "house"}
        )
        for i, q in enumerate(make_questions(10))
    ]
    # Two Table 5 kinds, listed after the others in the run; the house benchmark's taxonomy
    # (Table 5's order) puts them first.
    ranked = make_questions(2)
    qs += [q.model_copy(update={"id": f"r{i}", "benchmark": "house"}) for i, q in enumerate(ranked)]
    run = write_run(tmp_path / "run", "reference", ["eviseek-nav"], qs, lambda a, i: (True, 1.0, None))
    code = (
        "import sys; from eviseek.eval.results_file import summarize_run; "
        "r = summarize_run(sys.argv[1], name='h', slice_level='subcategory', c_metric='support', "
        "n_resamples=200); print('|'.join(s.name for s in r.agents[0].slices))"
    )
    orders = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", code, str(run)], capture_output=True, text=True, env=env, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        orders.add(proc.stdout.strip())
    # One order in every process: the Table 5 kinds first, then the others as the run holds them.
    assert len(orders) == 1, orders
    (order,) = orders
    assert order.split("|")[-len(kinds) :] == kinds
    assert set(order.split("|")[: -len(kinds)]) == {q.subcategory for q in ranked}
