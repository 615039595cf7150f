"""POPE's official yes/no reading of a reply, shared by the episode scorer and POPE's metrics.

POPE's evaluation (LLaVA's ``eval_pope``, which lmms-eval follows) reads a reply in three moves:
keep the text before its first full stop, drop the commas, split on spaces; the reply means "no"
when one of the words is exactly ``No``, ``no`` or ``not``, and "yes" otherwise. So "There is not
a dog in the image." is a no, and a reply that never says no (even "I cannot tell") is a yes.

One deviation (ours): an episode that produced no answer text at all (it failed, or never wrote
an ``<answer>``) reads as neither, so it is wrong whatever the truth and counts as neither a yes
nor a no in the metrics; the official script always has a reply to read.
"""

from __future__ import annotations

from typing import Literal

PopeAnswer = Literal["yes", "no"]

_NO_WORDS = frozenset({"No", "no", "not"})


def pope_answer(reply: str | None) -> PopeAnswer | None:
    """``"yes"`` or ``"no"`` as POPE's official rule reads ``reply`` (``None`` for no reply)."""
    if reply is None:
        return None
    first_sentence = reply.split(".", 1)[0]
    words = first_sentence.replace(",", "").split(" ")
    return "no" if _NO_WORDS.intersection(words) else "yes"


def pope_counts(pairs: list[tuple[str | None, str]]) -> dict[str, float]:
    """POPE's accuracy, precision, recall, F1 and yes-ratio from ``(reply, truth)`` pairs.

    "yes" is the positive class. Accuracy is the share of replies whose reading equals the truth,
    the same verdict :func:`eviseek.autotool.scoring.score_episode_answer` gives each episode, so
    the run's accuracy and POPE's agree.
    """
    tp = fp = tn = fn = yes = 0
    for reply, truth in pairs:
        pred = pope_answer(reply)
        positive = str(truth).strip().lower() == "yes"
        yes += pred == "yes"
        if positive:
            tp += pred == "yes"
            fn += pred != "yes"
        else:
            tn += pred == "no"
            fp += pred == "yes"
    n = len(pairs)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "accuracy": (tp + tn) / n if n else 0.0,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "yes_ratio": yes / n if n else 0.0,
    }
