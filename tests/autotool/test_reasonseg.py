"""ReasonSeg: loading its image + JSON pairs, and gIoU / cIoU, on a fixture written here in its
public format (LISA's ReasonSeg release)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image as PILImage

from eviseek.autotool.datasets import load_benchmark
from eviseek.autotool.metrics import reasonseg_metrics
from eviseek.autotool.reasonseg import box_mask, giou_ciou, intersection_union, polygon_mask, question_iou
from eviseek.autotool.scoring import score_episode_answer
from eviseek.errors import ConfigError
from eviseek.types import EpisodeResult
from eviseek.types.plans import AutoToolPlan


def _pair(root: Path, name: str, shapes: list[dict], text: list[str]) -> None:
    PILImage.new("RGB", (100, 80), (120, 120, 120)).save(root / f"{name}.jpg")
    meta = {"text": text, "is_sentence": True, "shapes": shapes}
    (root / f"{name}.json").write_text(json.dumps(meta))


def _square(x1: float, y1: float, x2: float, y2: float, label: str = "target") -> dict:
    return {"label": label, "points": [[x1, y1], [x2, y1], [x2, y2], [x1, y2]], "shape_type": "polygon"}


def test_reasonseg_loads_and_scores_giou_and_ciou(tmp_path: Path) -> None:
    _pair(tmp_path, "a", [_square(10, 10, 30, 30)], ["the thing that holds the coffee", "a mug"])
    _pair(tmp_path, "b", [_square(0, 0, 50, 40), _square(40, 30, 50, 40, "ignore")], ["where you sit"])
    kind, qs = load_benchmark(f"reasonseg:{tmp_path}", tmp_path / "img")
    assert kind == "reasonseg" and [q.id for q in qs] == ["reasonseg-a", "reasonseg-b"]
    a, b = qs
    assert a.contract.kind == "bbox" and a.metadata["expression"] == "the thing that holds the coffee"
    assert json.loads(a.ground_truth) == [10.0, 10.0, 30.0, 30.0] and a.initial_image.width == 100

    # Exact box on a square target: IoU 1 (PIL fills polygon edges, so the box covers 21 px a side).
    inter, union = question_iou(a, [10, 10, 31, 31])
    assert inter == union > 0
    # Half the target: IoU about 0.5; ignore pixels count for neither side.
    i_b, u_b = question_iou(b, [0, 0, 25, 41])
    assert 0.4 < i_b / u_b < 0.6
    truth = polygon_mask((100, 80), [[[0, 0], [50, 0], [50, 40], [0, 40]]])
    ignore = polygon_mask((100, 80), [[[40, 30], [50, 30], [50, 40], [40, 40]]])
    whole = intersection_union(box_mask((100, 80), [0, 0, 51, 41]), truth, ignore)
    assert whole[0] == whole[1] == int((truth & ~ignore).sum())

    # gIoU averages per question, cIoU pools the pixels.
    m = giou_ciou([(inter, union), (i_b, u_b)])
    assert m["giou"] == pytest.approx((1.0 + i_b / u_b) / 2)
    assert m["ciou"] == pytest.approx((inter + i_b) / (union + u_b))
    assert giou_ciou([(0, 0)]) == {"giou": 1.0, "ciou": 1.0}

    # Through the AutoTool scorer (shown frame = original here) and the run's headline metrics.
    plan = AutoToolPlan(shown_size=(100, 80), original_size=(100, 80))
    score = score_episode_answer(a, "[10, 10, 31, 31]", plan)
    assert score.correct and score.score == pytest.approx(1.0)
    rows = [
        EpisodeResult(
            question_id="reasonseg-a", agent="autotool", model="m", answer=score.answer, correct=True
        ),
        EpisodeResult(question_id="reasonseg-b", agent="autotool", model="m", answer=None, correct=False),
    ]
    head = reasonseg_metrics(rows, qs)
    _, u_none = question_iou(b, None)  # no answer: nothing predicted, the whole target missed
    assert head["giou"] == pytest.approx(0.5) and head["ciou"] == pytest.approx(inter / (union + u_none))


def test_reasonseg_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a folder"):
        load_benchmark(f"reasonseg:{tmp_path / 'nope'}", tmp_path)
    (tmp_path / "x.json").write_text(json.dumps({"text": ["q"], "shapes": []}))
    with pytest.raises(ConfigError, match="has no image"):
        load_benchmark(f"reasonseg:{tmp_path}", tmp_path)
