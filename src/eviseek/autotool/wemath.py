"""WeMath's four-dimensional metrics, written here from the benchmark's public definition.

WeMath (Qiao et al., 2024) breaks each multi-step problem into one-step sub-problems, one per
knowledge concept it needs: a two-step problem has two, a three-step problem three. The release
marks each row with its problem (``ID``, shared by a problem and its sub-problems, e.g.
``2steps_7``) and its part (``key``: ``2steps_1``, ``2steps_2`` for the sub-problems,
``2steps_multi`` for the whole problem). testmini holds 525 problems (360 two-step, 165
three-step) in 1,740 rows.

Each problem falls in exactly one of four classes, read from whether the whole problem and each
of its sub-problems was answered right:

* **Insufficient Knowledge (IK)** - a sub-problem wrong and the problem wrong;
* **Inadequate Generalization (IG)** - every sub-problem right, the problem wrong;
* **Complete Mastery (CM)** - the problem right, and (strict) every sub-problem right, or
  (loose) at least one sub-problem right;
* **Rote Memorization (RM)** - the problem right, and (strict) a sub-problem wrong, or (loose)
  every sub-problem wrong.

IK and IG are the same under both readings; CM and RM trade problems between them. IK, IG and
CM are shares of all problems; RM is a share of the problems answered right (``RM / (CM + RM)``).
The score is ``(N - 0.5 * IG - RM - IK) / N`` over the ``N`` problems, strict and loose (the
official evaluation fixes ``N = 525``, testmini's count; here ``N`` is the number of problems
with every part answered, which is 525 on the full testmini). Besides, S1 is the accuracy over
all sub-problems, S2 and S3 the accuracy of the whole two-step and three-step problems.

A problem counts only when all its parts were asked (a ``limit`` can cut one); the others are
counted in :attr:`WeMathMetrics.incomplete` and left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel

from eviseek.types import EpisodeResult, Question

_PART = re.compile(r"^\s*(\d+)\s*steps?_(\d+|multi)\s*$", re.IGNORECASE)
WHOLE = "multi"
"""The part name of the whole (composite) problem."""


def wemath_part(key: object) -> tuple[int, str] | None:
    """``(steps, part)`` from a WeMath ``key`` (``"2steps_1"`` -> ``(2, "1")``,
    ``"3steps_multi"`` -> ``(3, "multi")``), or ``None`` for any other value."""
    m = _PART.match(str(key)) if key is not None else None
    if m is None:
        return None
    return int(m.group(1)), m.group(2).lower()


class WeMathMetrics(BaseModel):
    """The four classes counted over WeMath problems, with the official rates and scores."""

    problems: int = 0
    """Problems with every part answered (the ``N`` of the rates and scores)."""
    incomplete: int = 0
    """Problems some part of which was not answered (left out)."""
    insufficient_knowledge: int = 0
    inadequate_generalization: int = 0
    complete_mastery_strict: int = 0
    complete_mastery_loose: int = 0
    rote_memorization_strict: int = 0
    rote_memorization_loose: int = 0
    sub_right: int = 0
    sub_total: int = 0
    two_step_right: int = 0
    two_step_total: int = 0
    three_step_right: int = 0
    three_step_total: int = 0

    def headline(self, prefix: str = "wemath_") -> dict[str, float]:
        """Shares (0..1) named as in the official table; empty when no problem was complete."""
        n = self.problems
        if not n:
            return {}

        def share(a: int, b: int) -> float:
            return a / b if b else 0.0

        ik, ig = self.insufficient_knowledge, self.inadequate_generalization
        cm_s, cm_l = self.complete_mastery_strict, self.complete_mastery_loose
        rm_s, rm_l = self.rote_memorization_strict, self.rote_memorization_loose
        out = {
            "problems": float(n),
            "score_strict": (n - 0.5 * ig - rm_s - ik) / n,
            "score_loose": (n - 0.5 * ig - rm_l - ik) / n,
            "insufficient_knowledge": ik / n,
            "inadequate_generalization": ig / n,
            "complete_mastery_strict": cm_s / n,
            "complete_mastery_loose": cm_l / n,
            "rote_memorization_strict": share(rm_s, cm_s + rm_s),
            "rote_memorization_loose": share(rm_l, cm_l + rm_l),
            "s1": share(self.sub_right, self.sub_total),
        }
        if self.two_step_total:
            out["s2"] = share(self.two_step_right, self.two_step_total)
        if self.three_step_total:
            out["s3"] = share(self.three_step_right, self.three_step_total)
        return {prefix + k: v for k, v in out.items()}


def classify(whole: bool, subs: Sequence[bool]) -> dict[str, bool]:
    """Which classes one problem falls in, from its whole answer and its sub-problems' answers."""
    every, some = all(subs), any(subs)
    return {
        "insufficient_knowledge": not whole and not every,
        "inadequate_generalization": not whole and every,
        "complete_mastery_strict": whole and every,
        "complete_mastery_loose": whole and some,
        "rote_memorization_strict": whole and not every,
        "rote_memorization_loose": whole and not some,
    }


def four_dimensional(rows: Sequence[EpisodeResult], questions: Sequence[Question]) -> WeMathMetrics:
    """WeMath's metrics over finished episodes (a failed episode counts as a wrong answer).

    A question takes part when it is WeMath's and carries its problem (``metadata["wemath_id"]``)
    and part (``metadata["key"]``), as :func:`eviseek.autotool.reasoning.load_reasoning` keeps them.
    """
    by_id = {q.id: q for q in questions}
    problems: dict[str, dict[str, bool]] = defaultdict(dict)
    steps_of: dict[str, int] = {}
    for r in rows:
        q = by_id.get(r.question_id)
        if q is None or q.metadata.get("benchmark") != "wemath" or q.metadata.get("wemath_id") is None:
            continue
        part = wemath_part(q.metadata.get("key"))
        if part is None:
            continue
        pid = str(q.metadata["wemath_id"])
        steps_of[pid] = part[0]
        problems[pid][part[1]] = bool(r.correct)
    out = WeMathMetrics()
    for pid, parts in sorted(problems.items()):
        steps = steps_of[pid]
        want = {WHOLE, *(str(i) for i in range(1, steps + 1))}
        if set(parts) != want:
            out.incomplete += 1
            continue
        subs = [parts[str(i)] for i in range(1, steps + 1)]
        whole = parts[WHOLE]
        out.problems += 1
        for name, hit in classify(whole, subs).items():
            setattr(out, name, getattr(out, name) + int(hit))
        out.sub_right += sum(subs)
        out.sub_total += len(subs)
        if steps == 2:
            out.two_step_right += int(whole)
            out.two_step_total += 1
        elif steps == 3:
            out.three_step_right += int(whole)
            out.three_step_total += 1
    return out
