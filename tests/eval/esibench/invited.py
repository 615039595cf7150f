"""The correct answer of an ESI-Bench question written as its task's prompt invites a model to
write it (the task's letter where it letters its options, the option text where it does not, its
own order and count formats). Written for eviseek's tests, from the answer-format lines that
``eviseek.envs.esibench.task_text.answer_format_of`` shows."""

from __future__ import annotations

from eviseek.answers.esibench import ESIRule
from eviseek.types import Question


def invited_answer(question: Question) -> str:
    """The truth in the form the task's answer format asks for (ours, per task)."""
    rule = ESIRule.model_validate(question.metadata["esibench"]["rule"])
    truth = question.ground_truth
    task = rule.task
    if task in ("angle_confusion", "occlusion"):
        # "choice_letter": "<A, B, or not-sure option>"
        return next(letter for letter, category, _ in rule.choices if category == rule.truth)
    if task == "deformable":
        return str(rule.truth)  # "<exactly one option id from the list, such as A or B or C or D>"
    if task == "stacking":
        # "1) <bottom> 2) <middle> 3) <top> or unsure", with the names the prompt lists
        order = [name.replace("_", " ") for name in rule.orders[0]]
        return " ".join(f"{i}) {name}" for i, name in enumerate(order, start=1))
    if task == "pour":
        return f"{rule.truth} container"  # "<left container, right container, or unsure>"
    if task == "action":
        # "two directions e.g. 'right, left'" (one direction where one object is asked about)
        return str(rule.truth) if rule.n_objects == 2 else f"{rule.truth}, {rule.secondary}"
    if task == "multiagent":
        return str(rule.truth)
    if isinstance(truth, list):
        return str(truth[0])
    return str(truth)
