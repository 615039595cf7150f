"""POPE: the official yes/no reading (LLaVA's eval_pope) and one consistent set of metrics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from eviseek.autotool.metrics import summarize
from eviseek.autotool.pope import pope_answer
from eviseek.eval.config import new_run_config
from eviseek.eval.runner import run_eval
from eviseek.eval.store import load_results
from eviseek.models import ScriptedModel
from eviseek.types import ChatMessage, GenerateConfig
from eviseek.types.question_file import read_questions


def _reference_rule(reply: str) -> str:
    """POPE's official rule, restated: the first sentence, commas dropped, split on spaces; a
    word that is exactly No, no or not makes it a no."""
    text = reply.split(".")[0] if "." in reply else reply
    words = text.replace(",", "").split(" ")
    return "no" if ("No" in words or "no" in words or "not" in words) else "yes"


HAND_MADE = [
    ("There is not a dog in the image.", "no"),  # the generic parser read this as neither
    ("No, there is no dog.", "no"),
    ("no", "no"),
    ("no,", "no"),  # the comma is dropped before the words are compared
    ("The answer is no", "no"),
    ("Yes, there is a dog.", "yes"),
    ("Yes. There is not a cat.", "yes"),  # only the first sentence counts
    ("Not really", "yes"),  # "Not" with a capital is not one of the three words
    ("Nope", "yes"),
    ("I cannot tell", "yes"),
    ("yes\nno", "yes"),  # split on spaces only: one word
    ("", "yes"),
]


@pytest.mark.parametrize(("reply", "expected"), HAND_MADE)
def test_pope_answer_follows_the_official_rule(reply: str, expected: str) -> None:
    assert _reference_rule(reply) == expected  # the hand-made expectation is the rule's
    assert pope_answer(reply) == expected
    assert pope_answer(None) is None


def test_run_accuracy_and_pope_metrics_agree(pope_jsonl: Path, tmp_path: Path) -> None:
    """A scripted run whose replies the generic parser misread: every number comes from one reading."""
    # Truths of the fixture: yes, no, yes, no, yes, no.
    replies = {
        0: "There is a thing in the image.",  # yes (right)
        1: "There is not a thing in the image.",  # no (right)
        2: "No, I do not see it.",  # no (wrong)
        3: "Yes, it is there.",  # yes (wrong)
        4: "yes",  # yes (right)
        5: "not visible",  # no (right)
    }

    def policy(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
        k = next(i for i in replies if f"thing {i} " in messages[1].text())
        return f"<tool_off><think>looking</think><answer>{replies[k]}</answer>"

    out = tmp_path / "run"
    cfg = new_run_config(
        agents=["autotool"],
        model="scripted/policy",
        dataset=f"pope:{pope_jsonl}",
        agent_config={"max_pixels": 40_000},
        env_workers=0,
    )
    run_eval(cfg, out, model=ScriptedModel(policy, name="scripted/policy"), progress=False)
    rows = sorted(load_results(out), key=lambda r: int(r.question_id))
    assert [r.correct for r in rows] == [True, True, False, False, True, True]
    assert [r.answer for r in rows] == ["yes", "no", "no", "yes", "yes", "no"]
    s = summarize(load_results(out), read_questions(out), model="scripted/policy", dataset="")
    h = s.headline
    assert h["accuracy"] == h["pope_accuracy"] == s.overall.accuracy == pytest.approx(4 / 6)
    # tp 2 (0, 4), fp 1 (3), tn 2 (1, 5), fn 1 (2).
    assert h["pope_precision"] == pytest.approx(2 / 3) and h["pope_recall"] == pytest.approx(2 / 3)
    assert h["pope_f1"] == pytest.approx(2 / 3) and h["pope_yes_ratio"] == pytest.approx(3 / 6)
    for split in s.splits:  # per-category numbers come from the same reading
        assert split.extra["accuracy"] == pytest.approx(split.accuracy)
