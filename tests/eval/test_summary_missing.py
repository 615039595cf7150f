"""``eviseek score`` counts a question without an episode as incorrect, as ``eviseek report`` does
(and the paper's paired tests: "counting missing answers as incorrect")."""

from __future__ import annotations

from eviseek.eval.metrics import QuestionKey, SystemResults
from eviseek.eval.scoring import summarize
from eviseek.types import EpisodeResult, Question


def test_score_and_report_count_a_missing_episode_alike() -> None:
    questions = [
        Question(id=f"q{i}", text="?", family="F", subcategory="S" if i < 3 else "T") for i in range(4)
    ]
    results = [
        EpisodeResult(
            question_id="q0", agent="a", family="F", subcategory="S", answer="x", correct=True, score=1.0
        ),
        EpisodeResult(
            question_id="q1", agent="a", family="F", subcategory="S", answer="y", correct=False, score=0.0
        ),
    ]
    summary = summarize(results, ["a", "b"], questions).agent("a")
    assert (summary.overall.n, summary.overall.correct, summary.missing) == (4, 1, 2)
    assert summary.subcategories["F/T"].n == 1 and summary.subcategories["F/T"].accuracy == 0.0
    assert summarize(results, ["a", "b"], questions).agent("b").missing == 4
    report = SystemResults(
        label="a",
        agent="a",
        questions=[QuestionKey(id=q.id, family=q.family, subcategory=q.subcategory) for q in questions],
        results={r.question_id: r for r in results},
    )
    outcomes = report.outcomes()
    assert sum(o.correct for o in outcomes) / len(outcomes) == summary.overall.accuracy == 0.25
    # Without the run's questions, only the episodes there are (the old reading).
    assert summarize(results, ["a"]).agent("a").overall.n == 2
