"""ESI-Bench questions show their task's own answer format and are read by their task's own rule.

Over every evaluation question, the correct answer written as the task's prompt invites scores
correct, and no question's prompt carries a lettering of eviseek's. The fixture tree always runs;
the full public set, with each record's task text from the checkout, when ``ESI_BENCH_ROOT`` is set
(``scripts/check_esibench.sh``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from eviseek.answers import score_answer
from eviseek.answers.accept import accept_answer
from eviseek.eval.esibench.dataset import LoadOptions, load_with_exclusions
from eviseek.types import Question
from tests.eval.esibench.invited import invited_answer
from tests.eval.esibench.official import esibench_root

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "esibench"
EVISEEK_LETTER = re.compile(r"\([A-Z]\) ")
TASK_LETTER = re.compile(r"^\s*([A-Z])[.)]\s", re.MULTILINE)


def _wrong_when_invited(questions: list[Question]) -> list[tuple[str, str]]:
    wrong = []
    for q in questions:
        said = invited_answer(q)
        verdict = score_answer(q, said, rules=q.metadata["rules"])
        if not verdict.correct or accept_answer(q, said) is None:
            wrong.append((q.metadata["esibench"]["id"], said))
    return wrong


def _letterings(q: Question) -> list[str]:
    """Each block of lettered options the question's prompt text shows (contract and advice)."""
    shown = f"{q.text}\n{q.contract.describe()}\n{q.guidance}"
    assert not EVISEEK_LETTER.search(shown), (q.id, shown)
    blocks = re.findall(r"(?:^\s*[A-Z][.)]\s.*\n?)+", shown, re.MULTILINE)
    return sorted({re.sub(r"\s+", " ", b).strip() for b in blocks})


def test_fixture_questions_score_their_invited_answer_and_letter_nothing() -> None:
    kept, _ = load_with_exclusions(FIXTURES, LoadOptions(images="skip", tasktext="off"))
    assert kept
    assert _wrong_when_invited(kept) == []
    for q in kept:
        assert not q.contract.lettered and not EVISEEK_LETTER.search(q.contract.describe()), q.id


def test_every_question_of_the_checkout_scores_its_invited_answer() -> None:
    root = esibench_root()
    kept, _ = load_with_exclusions(root, LoadOptions(images="skip", tasktext="require"))
    assert len(kept) == 3438
    assert _wrong_when_invited(kept) == []
    two = [q.id for q in kept if len(_letterings(q)) > 1]
    assert two == []
    formats = Counter(q.metadata["esibench"]["task"] for q in kept if q.contract.task_format)
    assert sum(formats.values()) == len(kept), formats
    for q in kept:  # the format shown is the task's own text, line by line
        system = q.metadata["esibench"]["task_text"]["system_prompt"]
        for line in q.contract.task_format.splitlines():
            words = line.split(" (the task's own answer field")[0]
            for part in words.split("; "):
                assert part.strip() in system, (q.id, part)
