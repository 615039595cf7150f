"""Synthetic zoom questions are drawn below AutoTool and training, and both read the same draw."""

from __future__ import annotations

from pathlib import Path

from eviseek.autotool.datasets import load_synthetic
from eviseek.envs.image.synthetic import SyntheticConfig, synthetic_question, synthetic_questions
from eviseek.train.data import synthetic_row, synthetic_rows

SMALL = SyntheticConfig(width=256, height=192, target_size=16, distractors=3)


def test_draws_are_determined_by_the_seed_and_answerable() -> None:
    a = synthetic_questions(4, seed=2, config=SMALL)
    assert [q.model_dump() for q in a] == [q.model_dump() for q in synthetic_questions(4, 2, SMALL)]
    assert a[0].image != synthetic_questions(1, seed=3, config=SMALL)[0].image
    for item in a:
        assert item.ground_truth in item.options and item.id == f"synthetic-{item.extra_info['seed']}"
    zoom = synthetic_question(5, SMALL, needs_zoom=True)
    assert zoom.needs_zoom and zoom.extra_info["kind"] == "zoom" and "(D)" in zoom.question


def test_training_rows_and_benchmark_questions_wrap_the_same_draw(tmp_path: Path) -> None:
    item = synthetic_question(7, SMALL, needs_zoom=False)
    row = synthetic_row(7, SMALL, needs_zoom=False)
    assert row.images == [item.image] and row.question == item.question and row.options == item.options
    assert [r.id for r in synthetic_rows(3, seed=1, config=SMALL)] == [
        q.id for q in synthetic_questions(3, seed=1, config=SMALL)
    ]
    (question,) = load_synthetic(1, tmp_path, seed=4, size=256)
    drawn = synthetic_questions(1, seed=4, config=SyntheticConfig(width=256, height=192))[0]
    assert question.text == drawn.question and question.ground_truth == drawn.ground_truth
    assert question.subcategory == drawn.extra_info["kind"] and question.family == "synthetic"
    assert question.initial_image is not None and question.initial_image.width == 256
    direct = drawn.to_question()
    assert direct.initial_image is not None and direct.initial_image.height == 192
