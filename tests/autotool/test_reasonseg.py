"""ReasonSeg: loading its image + JSON pairs, the paper's box score and (ours) LISA-style gIoU /
cIoU, on fixtures written here in its public format (LISA's ReasonSeg release)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image as PILImage

from eviseek.autotool.datasets import load_benchmark
from eviseek.autotool.metrics import reasonseg_metrics
from eviseek.autotool.reasonseg import (
    box_mask,
    giou_ciou,
    intersection_union,
    lisa_label_map,
    polygon_mask,
    question_iou,
)
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
    assert m["giou_ours"] == pytest.approx((1.0 + i_b / u_b) / 2)
    assert m["ciou_ours"] == pytest.approx((inter + i_b) / (union + u_b))
    assert giou_ciou([(0, 0)]) == {"giou_ours": 1.0, "ciou_ours": 1.0}

    # Through the AutoTool scorer (shown frame = original here) and the run's headline metrics.
    plan = AutoToolPlan(shown_size=(100, 80), original_size=(100, 80))
    score = score_episode_answer(a, "[10, 10, 30, 30]", plan)  # the target's own box
    assert score.correct and score.score == pytest.approx(1.0)
    rows = [
        EpisodeResult(
            question_id="reasonseg-a", agent="autotool", model="m", answer="[10, 10, 31, 31]", correct=True
        ),
        EpisodeResult(question_id="reasonseg-b", agent="autotool", model="m", answer=None, correct=False),
    ]
    head = reasonseg_metrics(rows, qs)
    _, u_none = question_iou(b, None)  # no answer: nothing predicted, the whole target missed
    assert head["giou_ours"] == pytest.approx(0.5)
    assert head["ciou_ours"] == pytest.approx(inter / (union + u_none))


def test_reasonseg_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a folder"):
        load_benchmark(f"reasonseg:{tmp_path / 'nope'}", tmp_path)
    (tmp_path / "x.json").write_text(json.dumps({"text": ["q"], "shapes": []}))
    with pytest.raises(ConfigError, match="has no image"):
        load_benchmark(f"reasonseg:{tmp_path}", tmp_path)


# The paper's rule (section 4.1): an answer is right when the IoU of its box with the target's box
# reaches 0.5. Hand-made cases with the IoU worked out by hand: (answer box, target box, IoU).
BOX_CASES = [
    ([10, 10, 30, 30], [10, 10, 30, 30], 1.0),  # exact
    ([10, 10, 30, 30], [10, 10, 30, 50], 0.5),  # half the target's height: 400 / 800
    ([10, 10, 30, 30], [20, 10, 40, 30], 200 / 600),  # shifted by half a width: 1/3
    ([0, 0, 10, 10], [20, 20, 40, 40], 0.0),  # apart
    ([10, 10, 30, 40], [10, 10, 30, 30], 400 / 600),  # answer larger than the target
]


@pytest.mark.parametrize(("answer", "target", "expected"), BOX_CASES)
def test_reasonseg_is_scored_by_box_iou_against_the_targets_box(
    tmp_path: Path, answer: list[int], target: list[int], expected: float
) -> None:
    # An ignore region covering the answer must not change the box score (masks play no part).
    _pair(tmp_path, "q", [_square(*target), _square(0, 0, 60, 60, "ignore")], ["the object"])
    (q,) = load_benchmark(f"reasonseg:{tmp_path}", tmp_path / "img")[1]
    assert json.loads(q.ground_truth) == [float(v) for v in target]
    plan = AutoToolPlan(shown_size=(100, 80), original_size=(100, 80))
    verdict = score_episode_answer(q, json.dumps(answer), plan)
    assert verdict.score == pytest.approx(expected)
    assert verdict.correct is (expected >= 0.5)


def test_lisa_mask_rules_on_hand_made_shapes(tmp_path: Path) -> None:
    """LISA paints shapes from the largest area to the smallest and skips ``flag`` shapes."""
    _pair(
        tmp_path,
        "nested",
        [
            _square(20, 20, 29, 29),  # a small target ...
            _square(0, 0, 59, 59, "ignore"),  # ... inside a large ignore region
            _square(70, 0, 99, 29, "flag"),  # a deprecated annotation: not part of anything
        ],
        ["the small thing"],
    )
    (q,) = load_benchmark(f"reasonseg:{tmp_path}", tmp_path / "img")[1]
    label = lisa_label_map((100, 80), q.metadata["shapes"])
    assert int((label == 1).sum()) == 100  # the small target survives the larger ignore region
    assert int((label == 255).sum()) == 60 * 60 - 100
    assert int(label[:, 70:].sum()) == 0  # the flag shape is skipped
    # A box elsewhere in the ignore region no longer scores IoU 1: it misses the target entirely.
    inter, union = question_iou(q, [40, 40, 50, 50])
    assert inter == 0 and union == 100
    # The box on the target: every target pixel, nothing else counted.
    assert question_iou(q, [20, 20, 30, 30]) == (100, 100)

    # The other nesting: a small ignore region inside a large target is cut out of it.
    shapes = [{"role": "ignore", "points": [[10, 10], [19, 10], [19, 19], [10, 19]]}]
    shapes.append({"role": "target", "points": [[0, 0], [39, 0], [39, 39], [0, 39]]})
    label = lisa_label_map((100, 80), shapes)
    assert int((label == 1).sum()) == 40 * 40 - 100 and int((label == 255).sum()) == 100
