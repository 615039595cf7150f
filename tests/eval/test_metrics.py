"""Paper metrics on small hand-computed cases."""

from __future__ import annotations

import pytest

from eviseek.eval.metrics import (
    QuestionKey,
    SystemResults,
    accuracy_table,
    default_pairs,
    mean_score,
    outcome_of,
    paired_comparisons,
    resource_usage,
    support_decomposition,
    support_table,
)
from eviseek.eval.stats import holm, mcnemar_exact
from eviseek.types import EpisodeResult


def _q(i: int, fam: str = "F1", sub: str = "S1") -> QuestionKey:
    return QuestionKey(id=f"q{i}", family=fam, subcategory=sub)


def _r(i: int, correct: bool | None, support: float | None = None, agent: str = "a", **kw) -> EpisodeResult:
    base = {"answer": "x"} | kw
    return EpisodeResult(question_id=f"q{i}", agent=agent, correct=correct, support=support, **base)


def test_outcome_rules_count_every_non_answer_as_incorrect() -> None:
    q = _q(0)
    assert outcome_of(q, None).status == "missing"
    assert not outcome_of(q, None).correct
    failed = outcome_of(q, _r(0, True, error="TimeoutError: episode took too long"))
    assert (failed.status, failed.correct) == ("failed", False)
    no_answer = outcome_of(q, _r(0, None, answer=None))
    assert (no_answer.status, no_answer.correct) == ("no_answer", False)
    unscored = outcome_of(q, _r(0, None))
    assert (unscored.status, unscored.correct) == ("unscored", False)
    # Died before answering: no answer-time images, so support is 0 rather than unknown.
    assert outcome_of(q, _r(0, None, answer=None, error="crash", images_in_answer=0)).support == 0.0
    assert outcome_of(q, _r(0, None, answer=None, error="crash", images_in_answer=2)).support is None
    assert outcome_of(q, None).support is None
    ok = outcome_of(q, _r(0, True, support=0.5))
    assert (ok.status, ok.correct, ok.support) == ("answered", True, 0.5)
    with pytest.raises(ValueError, match="outside"):
        outcome_of(q, _r(0, True, support=2.0))


def test_accuracy_by_family_and_subcategory_by_hand() -> None:
    questions = [_q(0, "A", "a1"), _q(1, "A", "a1"), _q(2, "A", "a2"), _q(3, "B", "b1"), _q(4, "B", "b1")]
    one = SystemResults(
        label="one",
        agent="one",
        questions=questions,
        results={
            "q0": _r(0, True),
            "q1": _r(1, False),
            "q2": _r(2, True),
            "q3": _r(3, True, error="boom"),  # failed -> incorrect
            # q4 missing -> incorrect
        },
    )
    two = SystemResults(
        label="two",
        agent="two",
        questions=questions,
        results={f"q{i}": _r(i, True) for i in range(5)},
    )
    rows = accuracy_table([one, two])
    names = [(r.level, r.name) for r in rows]
    assert names == [
        ("family", "A"),
        ("subcategory", "a1"),
        ("subcategory", "a2"),
        ("family", "B"),
        ("subcategory", "b1"),
        ("overall", "Overall"),
    ]
    by = {(r.level, r.name): r for r in rows}
    assert by[("family", "A")].acc == {"one": pytest.approx(200 / 3), "two": 100.0}
    assert by[("family", "A")].n == {"one": 3, "two": 3}
    assert by[("subcategory", "a1")].acc["one"] == 50.0
    assert by[("family", "B")].acc["one"] == 0.0
    assert by[("overall", "Overall")].acc["one"] == 40.0  # 2 of 5, question-weighted
    assert by[("overall", "Overall")].n["two"] == 5


def test_overall_accuracy_is_question_weighted_not_family_averaged() -> None:
    questions = [_q(0, "A")] + [_q(i, "B") for i in range(1, 10)]
    s = SystemResults(
        label="s",
        agent="s",
        questions=questions,
        results={"q0": _r(0, True)} | {f"q{i}": _r(i, False) for i in range(1, 10)},
    )
    overall = accuracy_table([s])[-1]
    assert overall.acc["s"] == 10.0  # a family average would say 50


def test_support_decomposition_by_hand() -> None:
    # s:     1    1    0    0    1
    # delta: 1   0.5   1    0    0
    questions = [_q(i) for i in range(5)]
    results = {
        "q0": _r(0, True, 1.0),
        "q1": _r(1, True, 0.5),
        "q2": _r(2, False, 1.0),
        "q3": _r(3, False, 0.0),
        "q4": _r(4, True, 0.0),
    }
    s = SystemResults(label="s", agent="s", questions=questions, results=results)
    d = support_decomposition(s.outcomes())
    assert d.complete and d.available
    assert d.acc == pytest.approx(60.0)
    assert pytest.approx(100 * 1.5 / 5) == d.C  # 30
    assert pytest.approx(100 * 1.0 / 5) == d.GW  # 20
    assert pytest.approx(30.0) == d.P
    assert pytest.approx(100 - 60 - 20) == d.N  # 20
    assert pytest.approx(100.0) == d.C + d.GW + d.P + d.N


def test_ungraded_support_is_not_available_rather_than_zero() -> None:
    questions = [_q(i) for i in range(4)]
    none_graded = SystemResults(
        label="s", agent="s", questions=questions, results={f"q{i}": _r(i, True) for i in range(4)}
    )
    d = support_decomposition(none_graded.outcomes())
    assert not d.available and d.C is None and d.GW is None and d.P is None and d.N is None
    partial = SystemResults(
        label="p",
        agent="p",
        questions=questions,
        results={"q0": _r(0, True, 1.0), "q1": _r(1, False, 0.5), "q2": _r(2, True), "q3": _r(3, False)},
    )
    d = support_decomposition(partial.outcomes())
    assert (d.n, d.n_graded, d.complete) == (4, 2, False)
    # Over the two graded questions: acc 50, C 50, GW 25, P 0, N 25.
    assert (d.acc, d.C, d.GW, d.P, d.N) == pytest.approx((50.0, 50.0, 25.0, 0.0, 25.0))
    rows = support_table([partial])
    assert rows[-1].level == "overall" and rows[-1].parts["p"].n_graded == 2


def test_resource_means_skip_unknown_tokens_and_count_failures() -> None:
    questions = [_q(i) for i in range(4)]
    results = {
        "q0": _r(
            0,
            True,
            steps=10,
            calls=5,
            input_tokens=1000,
            output_tokens=100,
            reasoning_tokens=40,
            images_in_answer=4,
            wall_time_s=2.0,
        ),
        "q1": _r(
            1,
            False,
            steps=20,
            calls=7,
            input_tokens=None,
            output_tokens=None,
            reasoning_tokens=None,
            images_in_answer=2,
            wall_time_s=4.0,
        ),
        "q2": _r(
            2,
            False,
            steps=0,
            calls=1,
            input_tokens=500,
            output_tokens=50,
            reasoning_tokens=0,
            images_in_answer=0,
            wall_time_s=0.5,
            error="env crashed",
        ),
    }
    u = resource_usage(SystemResults(label="s", agent="s", questions=questions, results=results))
    assert (u.n_questions, u.n_episodes, u.n_failed) == (4, 3, 1)
    assert u.steps == pytest.approx(10.0)
    assert u.calls == pytest.approx(13 / 3)
    # Tokens are input + output + reasoning (the paper's count): (1000 + 100 + 40 + 550) / 2.
    assert u.tokens == pytest.approx((1140 + 550) / 2) and u.tokens_known == 2
    assert u.input_tokens == pytest.approx(750.0)
    assert u.reasoning_tokens == pytest.approx(20.0)
    assert u.images == pytest.approx(2.0)
    assert u.wall_time_s == pytest.approx(6.5 / 3)
    assert u.status_counts == {"answered": 2, "failed": 1, "missing": 1}
    # Tokens per executed step over the episodes with known tokens: (1140 + 550) / (10 + 0).
    assert u.tokens_per_step == pytest.approx(169.0)
    assert u.steps_per_decision is None  # these records predate decision counts
    empty = resource_usage(SystemResults(label="e", agent="e", questions=questions))
    assert empty.steps is None and empty.tokens is None and empty.n_episodes == 0
    assert empty.tokens_per_step is None and empty.steps_per_decision is None


def test_steps_per_decision_tells_intents_from_atomic_actions() -> None:
    questions = [_q(i) for i in range(2)]

    def usage(steps_decisions: list[tuple[int, int]]):  # type: ignore[no-untyped-def]
        results = {
            f"q{i}": _r(i, True, steps=s, decisions=d, input_tokens=100 * s, output_tokens=0)
            for i, (s, d) in enumerate(steps_decisions)
        }
        return resource_usage(SystemResults(label="s", agent="s", questions=questions, results=results))

    intents = usage([(12, 3), (6, 3)])
    atomic = usage([(5, 5), (7, 7)])
    assert intents.steps_per_decision == pytest.approx(3.0) and atomic.steps_per_decision == 1.0
    assert intents.tokens_per_step == pytest.approx(100.0)


def test_mean_score_uses_soft_scores_and_zero_for_failures() -> None:
    questions = [_q(i) for i in range(3)]
    results = {
        "q0": _r(0, False, score=0.6667),
        "q1": _r(1, True, score=1.0),
        "q2": _r(2, True, score=1.0, error="x"),
    }
    assert mean_score(
        SystemResults(label="s", agent="s", questions=questions, results=results)
    ) == pytest.approx(100 * 1.6667 / 3)
    assert mean_score(SystemResults(label="s", agent="s", questions=questions)) is None


def test_pairs_and_paired_comparisons() -> None:
    questions = [_q(i) for i in range(40)]

    def system(run: str, agent: str, right: set[int]) -> SystemResults:
        return SystemResults(
            label=f"{run}/{agent}",
            agent=agent,
            run=run,
            questions=questions,
            results={f"q{i}": _r(i, i in right, agent=agent) for i in range(40)},
        )

    m1p = system("m1", "passive", set(range(10)))
    m1e = system("m1", "eviseek", set(range(5, 30)))
    m2p = system("m2", "passive", set(range(20)))
    pairs = default_pairs([m1p, m1e, m2p])
    assert pairs == [("m1/eviseek", "m1/passive"), ("m2/passive", "m1/passive")]
    tests = paired_comparisons([m1p, m1e, m2p], n_resamples=2_000)
    first = tests[0]
    # eviseek right on 5..29, passive on 0..9: n+ = 20 (10..29), n- = 5 (0..4).
    assert (first.n_plus, first.n_minus, first.n) == (20, 5, 40)
    assert first.delta == pytest.approx(100 * 15 / 40)
    assert first.p == pytest.approx(mcnemar_exact(20, 5))
    assert [t.p_holm for t in tests] == pytest.approx(holm([t.p for t in tests]))
    assert all(t.p_holm is not None and t.p_holm >= t.p for t in tests)
    with pytest.raises(ValueError, match="unknown system"):
        paired_comparisons([m1p], [("m1/passive", "nope")])


def test_paired_comparison_uses_only_common_questions() -> None:
    a = SystemResults(
        label="a",
        agent="a",
        questions=[_q(i) for i in range(10)],
        results={f"q{i}": _r(i, True) for i in range(10)},
    )
    b = SystemResults(label="b", agent="b", questions=[_q(i) for i in range(5, 15)], results={})
    (t,) = paired_comparisons([a, b], [("a", "b")], n_resamples=500)
    assert t.n == 5 and t.n_plus == 5 and t.n_minus == 0
    assert "5 common questions" in t.notes[0]


def test_duplicate_question_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate question ids"):
        SystemResults(label="s", agent="s", questions=[_q(1), _q(1)])


def test_blind_table_shows_exact_and_soft_scores_beside_every_agent() -> None:
    """A run with the blind agent gets a per-subcategory table of exact and soft scores, blind's
    first; a count answered near the truth earns soft credit but no exact credit."""
    from eviseek.eval.tables import blind_subcategory_table, is_blind

    qs = [_q(0, "F1", "Count"), _q(1, "F1", "Count"), _q(2, "F2", "Look")]
    blind = SystemResults(
        label="blind",
        agent="blind",
        questions=qs,
        results={
            "q0": _r(0, False, agent="blind", answer="2", score=0.5),
            "q1": _r(1, True, agent="blind", answer="1", score=1.0),
            "q2": _r(2, False, agent="blind", answer="x", score=0.0),
        },
    )
    seek = SystemResults(
        label="eviseek",
        agent="eviseek",
        questions=qs,
        results={f"q{i}": _r(i, True, agent="eviseek", answer="y", score=1.0) for i in range(3)},
    )
    assert is_blind(blind) and not is_blind(seek)
    rows = accuracy_table([seek, blind])
    count = next(r for r in rows if r.subcategory == "Count")
    assert count.acc["blind"] == pytest.approx(50.0) and count.soft["blind"] == pytest.approx(75.0)
    table = blind_subcategory_table(rows, [seek, blind])
    assert table.columns[:4] == ["Subcategory", "#Q", "blind exact", "blind soft"]
    md = table.markdown()
    assert "| Count | 2 | 50.0 | 75.0 | 100.0 | 100.0 |" in md
