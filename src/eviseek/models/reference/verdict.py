"""A solver's answer with its confidence, and the answer-form helpers every solver shares."""

from __future__ import annotations

from dataclasses import dataclass

from eviseek.models.reference.task import Task


@dataclass
class Verdict:
    """An answer, how sure the policy is of it, and the image it rests on."""

    answer: str | None
    confidence: float
    view: int | None = None
    reason: str = ""


def nearest_option(options: list[str], answer: str | None) -> str:
    """The option that best stands for ``answer``: the same text ignoring case, else the nearest
    number, else the first option."""
    for o in options:
        if answer is not None and o.lower() == answer.lower():
            return o
    try:
        value = float(answer or "")
    except ValueError:
        return options[0]
    numbers = [(abs(float(o) - value), o) for o in options if o.replace(".", "", 1).isdigit()]
    return min(numbers)[1] if numbers else options[0]


def default_answer(task: Task) -> str:
    """A well-formed answer when nothing could be measured."""
    if task.answer_kind == "integer":
        return "1"
    if task.answer_kind == "sequence" and task.options:
        return ", ".join(task.options)
    if task.options:
        return task.options[0]
    return "unknown"


def pick_option(task: Task, label: str) -> str:
    for o in task.options:
        if o.lower() == label.lower():
            return o
    return label
