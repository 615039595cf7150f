"""The reference policy's EXPRESS judge is a labelled text rule: it scores words, not pixels."""

from __future__ import annotations

import pytest

from eviseek.models.reference.express_judge import RULE, express_judge_reply, text_score


@pytest.mark.parametrize(
    ("reference", "response", "score"),
    [
        ("red", "Red.", 5),
        ("red", "It is red", 5),
        ("yes", "Yes, there is one.", 5),
        ("yes", "no", 1),
        ("2", "two", 5),
        ("2", "3", 2),
        ("2", "7", 1),
        ("living room | hallway", "living room", 3),
        ("red", "", 1),
        ("a solid wall", "a doorway", 1),
    ],
)
def test_text_score(reference: str, response: str, score: int) -> None:
    assert text_score(reference, response) == score


def test_grounding_follows_the_score_only_with_an_image() -> None:
    meta = {"reference_answer": "red", "response": "red"}
    assert express_judge_reply(meta, 1) == {"reason": RULE, "grounding": 1.0, "score": 5}
    assert express_judge_reply(meta, 0)["grounding"] == 0.0
    assert "ignores the image" in RULE
