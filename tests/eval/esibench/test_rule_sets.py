"""Both ESI-Bench rule sets on every record: ``esibench:official`` is the official code's rules
(compared with ESI-Bench's own functions in test_official_agreement.py); ``esibench:paper`` adds
app. A's two normalisations and otherwise agrees with it.

The fixture tree always runs; the full public set runs when ``ESI_BENCH_ROOT`` is set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eviseek.answers import AnswerScore, score_answer
from eviseek.answers.esibench import OFFICIAL_RULES, PAPER_RULES, ESIRule, esibench_score
from eviseek.eval.esibench import iter_records, load_with_exclusions
from eviseek.eval.esibench.dataset import LoadOptions, load_esibench, parse_spec
from eviseek.types import Question
from tests.eval.esibench.official import esibench_root
from tests.eval.esibench.predictions import odd_predictions

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "esibench"


def _complete_route(rule: ESIRule) -> str:
    """The truth written as a complete route: the prompt's steps with the blanks filled in."""
    blanks = iter(part.strip() for part in str(rule.truth).split("|"))
    return " | ".join(step if step is not None else next(blanks) for step in rule.route)


def _check(root: Path) -> dict[str, int]:
    questions, dropped = load_with_exclusions(root, LoadOptions(images="skip", all=True))
    by_id: dict[str, Question] = {q.metadata["esibench"]["id"]: q for q in questions + dropped}
    seen = {"records": 0, "navigation": 0, "routes": 0, "stacks": 0, "differ": 0}
    for record in iter_records(root):
        question = by_id[record.id]
        assert question.metadata["rules"] == PAPER_RULES
        rule = ESIRule.model_validate(question.metadata["esibench"]["rule"])
        row = json.loads(Path(record.source).read_text(encoding="utf-8")) if record.stem else {}
        seen["records"] += 1
        for raw in odd_predictions(row or record.model_dump()):
            paper = esibench_score(rule, raw, PAPER_RULES)
            official = esibench_score(rule, raw, OFFICIAL_RULES)
            piped = isinstance(raw, str) and "|" in raw and rule.task == "stacking"
            if (paper.correct, paper.soft_score) != (official.correct, official.soft_score):
                seen["differ"] += 1
                # Only the two normalisations may change a verdict, and only ever to correct.
                assert (piped or rule.route) and paper.correct is True, (record.source, raw)
        if rule.task == "stacking" and rule.orders:
            seen["stacks"] += 1
            order = " | ".join(rule.orders[0])
            assert esibench_score(rule, order, PAPER_RULES).correct is True, record.source
            assert esibench_score(rule, order.replace(" | ", ", "), OFFICIAL_RULES).correct is True
        if record.small_task == "Long-Term Navigation":
            seen["navigation"] += 1
        if rule.route:
            seen["routes"] += 1
            blanks = [s for s in rule.route if s is None]
            assert blanks and len(blanks) == len(rule.options) == len(str(rule.truth).split("|")), (
                record.source
            )
            full = _complete_route(rule)
            assert esibench_score(rule, full, PAPER_RULES).correct is True, (record.source, full)
            if len(rule.route) > len(blanks):  # a route of blanks only is the answer itself
                assert esibench_score(rule, full, OFFICIAL_RULES).correct is False, (record.source, full)
            # The benchmark's scorer follows the question's rule set, and the spec can ask for the
            # official one.
            assert _esibench_verdict(question, full).correct is True
            official_q = question.model_copy(
                update={"metadata": {**question.metadata, "rules": OFFICIAL_RULES}}
            )
            assert _esibench_verdict(official_q, full).correct is (len(rule.route) == len(blanks))
            assert score_answer(official_q, full, rules=OFFICIAL_RULES) == _esibench_verdict(official_q, full)
    return seen


def _esibench_verdict(question: Question, raw: str) -> AnswerScore:
    """The verdict of ESI-Bench's registered scorer (what the harness applies to its questions)."""
    from eviseek.eval.benchmark import benchmarks
    from eviseek.types import Trajectory

    scorer = benchmarks()["esibench"].scorer
    assert scorer is not None
    return scorer(Trajectory(episode_id="e", question_id=question.id, agent="a"), question, raw)


def test_both_rule_sets_on_the_fixture_records() -> None:
    seen = _check(FIXTURES)
    # The fixture's navigation record asks in a form of its own, with no numbered route.
    assert seen["records"] == 19 and seen["navigation"] == 1 and seen["routes"] == 0 and seen["stacks"] == 1


def test_both_rule_sets_on_every_public_record() -> None:
    root = esibench_root()
    seen = _check(root)
    assert seen["records"] == 3502 and seen["stacks"] == 89
    # Every Long-Term Navigation record has a numbered route with blanks, and no other record has.
    assert seen["navigation"] == seen["routes"] == 60


def test_the_spec_chooses_the_rule_set() -> None:
    assert parse_spec("x")[1].rules == PAPER_RULES
    assert parse_spec("x?rules=official")[1].rules == OFFICIAL_RULES
    assert parse_spec("x?rules=esibench:paper")[1].rules == PAPER_RULES
    from eviseek.errors import ConfigError

    with pytest.raises(ConfigError, match=r"rules=paper\|official"):
        parse_spec("x?rules=mine")
    qs = load_esibench(f"{FIXTURES}?images=skip&rules=official")
    assert {q.metadata["rules"] for q in qs} == {OFFICIAL_RULES}
