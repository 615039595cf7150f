"""Which answers an ESI-Bench question accepts as they are, and which get the task's forced choice
(each task module's needs_force_final_choice, ESI-Bench 9f35528); other questions by contract."""

from __future__ import annotations

import pytest

from eviseek.answers.accept import accept_answer
from eviseek.answers.esibench import PAPER_RULES, ESIRule, esibench_accepted
from eviseek.types import AnswerContract, Question

CHOICES = [["A", "webcam", "webcam"], ["B", "motion_sensor", "motion sensor"], ["C", "not_sure", "not sure"]]


@pytest.mark.parametrize(
    ("rule", "raw", "kept"),
    [
        (ESIRule(task="touching"), "A", None),  # no lettering: read as not sure, so forced
        (ESIRule(task="touching"), "Yes, they are touching.", "yes"),
        (ESIRule(task="angle_confusion", choices=CHOICES), "A", "webcam"),
        (ESIRule(task="angle_confusion", choices=CHOICES), "C", None),
        (ESIRule(task="action"), "not sure", "not sure"),  # only "unsure" is forced
        (ESIRule(task="action"), "unsure", None),
        (ESIRule(task="cognitivemap"), "not sure", None),
        (ESIRule(task="cognitivemap"), "kitchen_0 | bathroom_0", "kitchen_0 | bathroom_0"),
        (ESIRule(task="stacking", labels=["a", "b", "c"]), "1) a 2) b 3) c", "1) a 2) b 3) c"),
        (ESIRule(task="stacking", labels=["a", "b", "c"]), "unsure", None),
        (ESIRule(task="slope"), "unsure", "unsure"),  # Inclined Plane never asks
        (ESIRule(task="pour", labels=["jar", "glass"]), "the jar", "left"),
        (ESIRule(task="pour", labels=["jar", "glass"]), "both", None),
        (ESIRule(task="multiagent"), "5", None),
        (ESIRule(task="multiagent"), "2", "2"),
        (ESIRule(task="counting"), "three", "three"),  # a word is kept (and scored wrong)
        (ESIRule(task="counting"), "not sure", None),
        (ESIRule(task="deformable", choices=[["A", "pear"]]), "not sure", "A"),  # read as option A
        (ESIRule(task="unobserved_changes", options=["yes", "no"]), "b) unknown", None),
    ],
)
def test_the_task_rule_decides(rule: ESIRule, raw: str, kept: str | None) -> None:
    assert esibench_accepted(rule, raw) == kept


def test_out_of_steps_forces_where_the_task_says_so() -> None:
    assert esibench_accepted(ESIRule(task="deformable", choices=[["A", "pear"]]), "A") == "A"
    assert esibench_accepted(ESIRule(task="deformable"), "A", stop_reason="max_steps") is None
    assert esibench_accepted(ESIRule(task="cognitivemap"), "yes", stop_reason="max_steps") is None
    assert esibench_accepted(ESIRule(task="touching"), "yes", stop_reason="max_steps") == "yes"


def test_questions_without_esibench_rules_keep_the_contract() -> None:
    plain = Question(id="q", text="?", contract=AnswerContract(kind="yes_no", options=["yes", "no"]))
    assert accept_answer(plain, "A") == "yes"
    esi = plain.model_copy(
        update={"metadata": {"rules": PAPER_RULES, "esibench": {"rule": {"task": "touching"}}}}
    )
    assert accept_answer(esi, "A") is None and accept_answer(esi, "no") == "no"
