"""Scoring episodes and summarising runs, live or offline from a run directory.

:func:`score_trajectory` is the one place an :class:`EpisodeResult` is computed from a
trajectory and its question. The runner calls it on the live trajectory; ``eviseek score``
calls it on the saved one. Both see the same inputs (the answer text, the failure reason, the
visual support grade and the wall time are all saved in ``trajectory.json``), so the offline
numbers equal the live ones by construction, and a changed scorer can be applied to old runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from eviseek.answers import AnswerScore, score_answer
from eviseek.errors import ConfigError, SettingError
from eviseek.eval.benchmark import Benchmark, benchmark_for, rule_sets
from eviseek.types import EpisodeResult, Question, Trajectory


def score_trajectory(
    trajectory: Trajectory, question: Question, *, dataset: str | None = None
) -> EpisodeResult:
    """The scored result of one episode: correctness under its benchmark's scorer (the answer
    contract when it has none), and its cost. ``dataset`` is the run's spec, which names the
    benchmark; without one, or for a question file, the question's benchmark is recognised
    from the question itself (:func:`~eviseek.eval.benchmark.benchmark_for`).

    Reads from ``trajectory.result`` only what cannot be recomputed (the raw answer, the
    failure reason, the visual support grade, the wall time, the mode); everything else comes
    from the question and the recorded steps and calls. A failed episode or a missing answer
    scores 0.
    """
    base = trajectory.result or EpisodeResult(question_id=question.id, agent=trajectory.agent)
    raw = base.raw_answer if base.raw_answer is not None else base.answer
    if base.error is None:
        verdict = _verdict(trajectory, question, raw, benchmark_for(question, dataset))
        answer, correct, score = verdict.answer, verdict.correct, verdict.score
    else:
        answer, correct, score = None, False, 0.0
    mode = base.mode
    if mode is None and isinstance(trajectory.plan.mode, str):
        mode = trajectory.plan.mode
    return trajectory.make_result(
        question,
        model=trajectory.model or base.model,
        answer=answer,
        raw_answer=raw,
        correct=correct,
        score=score,
        support=base.support,
        mode=mode,
        wall_time_s=base.wall_time_s,
        error=base.error,
    )


def _verdict(
    trajectory: Trajectory, question: Question, raw: str | None, benchmark: Benchmark | None
) -> AnswerScore:
    """The benchmark's own verdict, or the answer contract's when it registered no scorer."""
    if benchmark is not None and benchmark.scorer is not None:
        return benchmark.scorer(trajectory, question, raw)
    return score_answer(question, raw)


# --------------------------------------------------------------------------------------------
# Summaries


class GroupScore(BaseModel):
    """Accuracy of one agent on one group of questions (a family, a subcategory, or all)."""

    n: int
    correct: int
    accuracy: float
    """Question-weighted: correct answers over questions in the group."""
    mean_score: float
    """Mean task score (counting earns partial credit)."""


class CostSummary(BaseModel):
    """Mean cost per episode. Token means are over episodes whose server reported the count."""

    steps: float
    calls: float
    input_tokens: float | None
    output_tokens: float | None
    reasoning_tokens: float | None
    images_in_answer: float
    wall_time_s: float


class AgentSummary(BaseModel):
    """Everything ``eviseek score`` reports for one agent."""

    agent: str
    overall: GroupScore
    families: dict[str, GroupScore] = Field(default_factory=dict)
    subcategories: dict[str, GroupScore] = Field(default_factory=dict)
    """Keyed ``family/subcategory``."""
    failed: int = 0
    """Episodes that ended in an error (counted as incorrect)."""
    missing: int = 0
    """Questions of the run this agent has no episode for (counted as incorrect, as ``eviseek
    report`` and the paper's paired tests count a missing answer)."""
    support: float | None = None
    """Mean visual support over episodes that have a grade."""
    cost: CostSummary
    total_input_tokens: int | None = None
    total_output_tokens: int | None = None


class RunSummary(BaseModel):
    """Per-agent summaries in the order the agents first appear."""

    agents: list[AgentSummary]

    def agent(self, name: str) -> AgentSummary:
        """The summary of agent ``name``."""
        for a in self.agents:
            if a.agent == name:
                return a
        raise KeyError(name)


def _group(results: list[EpisodeResult], missing: int = 0) -> GroupScore:
    n = len(results) + missing
    correct = sum(1 for r in results if r.correct)
    score = sum(r.score or 0.0 for r in results)
    return GroupScore(
        n=n, correct=correct, accuracy=correct / n if n else math.nan, mean_score=score / n if n else math.nan
    )


def _mean(values: Iterable[float | int | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _total(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def summarize(
    results: Iterable[EpisodeResult], agents: Sequence[str] = (), questions: Sequence[Question] | None = None
) -> RunSummary:
    """Accuracy overall and per family and subcategory, failures, support and mean costs.

    Agents come in the order of ``agents`` (the run's order), then any others by name. With the
    run's ``questions``, each of the run's agents is scored over all of them: a question it has no
    episode for counts as incorrect (``missing``), as in ``eviseek report``; costs are means over
    the episodes there are.
    """
    by_agent: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        by_agent[r.agent].append(r)
    present = [a for a in agents if a in by_agent or questions is not None]
    order = present + sorted(a for a in by_agent if a not in agents)
    out = []
    for agent in order:
        rows = by_agent[agent]
        fam: dict[str, list[EpisodeResult]] = defaultdict(list)
        sub: dict[str, list[EpisodeResult]] = defaultdict(list)
        for r in rows:
            fam[r.family or "-"].append(r)
            sub[f"{r.family or '-'}/{r.subcategory or '-'}"].append(r)
        done = {r.question_id for r in rows}
        absent = [q for q in questions or [] if q.id not in done]
        fam_missing: dict[str, int] = defaultdict(int)
        sub_missing: dict[str, int] = defaultdict(int)
        for q in absent:
            fam_missing[q.family or "-"] += 1
            sub_missing[f"{q.family or '-'}/{q.subcategory or '-'}"] += 1
            fam.setdefault(q.family or "-", [])
            sub.setdefault(f"{q.family or '-'}/{q.subcategory or '-'}", [])
        cost = CostSummary(
            steps=_mean(r.steps for r in rows) or 0.0,
            calls=_mean(r.calls for r in rows) or 0.0,
            input_tokens=_mean(r.input_tokens for r in rows),
            output_tokens=_mean(r.output_tokens for r in rows),
            reasoning_tokens=_mean(r.reasoning_tokens for r in rows),
            images_in_answer=_mean(r.images_in_answer for r in rows) or 0.0,
            wall_time_s=_mean(r.wall_time_s for r in rows) or 0.0,
        )
        out.append(
            AgentSummary(
                agent=agent,
                overall=_group(rows, len(absent)),
                families={k: _group(v, fam_missing[k]) for k, v in sorted(fam.items())},
                subcategories={k: _group(v, sub_missing[k]) for k, v in sorted(sub.items())},
                failed=sum(1 for r in rows if r.error is not None),
                missing=len(absent),
                support=_mean(r.support for r in rows),
                cost=cost,
                total_input_tokens=_total(r.input_tokens for r in rows),
                total_output_tokens=_total(r.output_tokens for r in rows),
            )
        )
    return RunSummary(agents=out)


# --------------------------------------------------------------------------------------------
# Offline re-scoring


class RescoredRun(BaseModel):
    """The outcome of re-scoring a run directory from its saved files."""

    results: list[EpisodeResult]
    summary: RunSummary
    changed: list[str] = Field(default_factory=list)
    """``agent/question_id`` of rows whose re-scored verdict differs from the stored one."""
    missing: list[str] = Field(default_factory=list)
    """Stored rows whose trajectory file is missing (their stored result is used)."""
    unstored: list[str] = Field(default_factory=list)
    """Finished episodes (a saved trajectory with a result) that have no row in the store."""
    store: str = "ok"
    """``ok``, ``missing`` (no ``results.sqlite``) or ``empty`` (a file with no rows)."""
    rules: dict[str, int] = Field(default_factory=dict)
    """Questions per scoring rule set in force (``esibench:paper``, ``esibench:official``,
    ``contract``...)."""
    notes: list[str] = Field(default_factory=list)
    """What the reader should know about the run's benchmark: a plugin not imported or changed
    since, questions recognised by content (a run saved before benchmark records)."""


def rescore_run(run_dir: str | Path, *, rules: str | None = None, plugins: Sequence[str] = ()) -> RescoredRun:
    """Re-score every finished episode of ``run_dir`` from ``trajectory.json`` + ``questions.jsonl``.

    Nothing is re-run and nothing is written; the store is opened read-only, so a run on
    read-only storage can be scored. A finished episode is one with a row in the store or a
    saved trajectory holding a result (the runner saves the trajectory before it commits the
    row), so a lost or emptied store loses nothing here.

    ``rules`` (``esibench:paper`` or ``esibench:official``; any rule set a benchmark registers,
    :class:`~eviseek.eval.benchmark.RuleSets`) scores that benchmark's questions by it instead of
    the one they were loaded with; other questions are unaffected. ``plugins`` are imported
    before the run's own (``eviseek score --plugin``: a run's plugin that moved).
    """
    from eviseek.eval.config import load_config
    from eviseek.eval.recover import all_saved_results
    from eviseek.eval.store import ResultsStore
    from eviseek.types.question_file import read_questions_by_id
    from eviseek.types.rundir import QUESTIONS_FILE, STORE_FILE, RunDir

    run_dir = Path(run_dir)
    run = RunDir(run_dir)
    qfile = run.questions_file
    if not qfile.exists():
        raise ConfigError(f"{run_dir} is not a run directory: {QUESTIONS_FILE} is missing")
    from eviseek.eval.run_benchmarks import open_benchmarks

    config = load_config(run_dir)
    agents, dataset = config.agents, config.dataset
    questions = read_questions_by_id(qfile)
    # The run's plugins imported and its benchmark looked up by name: a plugin benchmark that is
    # not registered stops here (one line naming the plugin), never scored by other rules.
    notes = open_benchmarks(run_dir, run.read_config(), list(questions.values()), plugins=plugins)
    if rules is not None:
        _choose_rules(questions.values(), rules, dataset)
    stored: list[EpisodeResult] = []
    state = "missing"
    if run.store_file.exists():
        with ResultsStore(run_dir, read_only=True) as store:
            stored = store.results()
        state = "ok" if stored else "empty"
    keys = {(r.agent, r.question_id) for r in stored}
    unstored = [r for r in all_saved_results(run_dir) if (r.agent, r.question_id) not in keys]
    if not stored and not unstored:
        raise ConfigError(
            f"{run_dir} has no finished episode: {STORE_FILE} holds no row and no saved "
            "trajectory holds a result"
        )
    results: list[EpisodeResult] = []
    changed: list[str] = []
    missing: list[str] = []
    for row in [*stored, *unstored]:
        key = f"{row.agent}/{row.question_id}"
        question = questions.get(row.question_id)
        if question is None:
            raise ConfigError(f"{run_dir}: stored episode {key} has no question in {QUESTIONS_FILE}")
        directory = run.episode_dir(row.agent, row.question_id)
        if not run.trajectory_file(row.agent, row.question_id).exists():
            missing.append(key)
            results.append(row)
            continue
        trajectory = Trajectory.load(directory)
        trajectory.agent = row.agent
        new = score_trajectory(trajectory, question, dataset=dataset)
        if (new.answer, new.correct, new.score) != (row.answer, row.correct, row.score):
            changed.append(key)
        results.append(new)
    return RescoredRun(
        results=results,
        summary=summarize(results, agents, list(questions.values())),
        changed=changed,
        missing=missing,
        unstored=[f"{r.agent}/{r.question_id}" for r in unstored],
        store=state,
        rules=rules_count(questions.values(), dataset),
        notes=notes,
    )


def _choose_rules(questions: Iterable[Question], name: str, dataset: str | None) -> None:
    """Score every question whose benchmark has the rule set ``name`` by it (``official`` is
    read as ``esibench:official``: a benchmark's own name may be left out)."""
    from eviseek.eval.benchmark import RULES_KEY

    sets = rule_sets()
    chosen = {
        bench: found
        for bench, rs in sets.items()
        if (found := rs.parse(name) or rs.parse(f"{bench}:{name}")) is not None
    }
    if not chosen:
        known = list(dict.fromkeys(n for rs in sets.values() for n in rs.names))
        raise SettingError(f"unknown rule set {name!r}; choose one of {', '.join(known)}")
    for q in questions:
        benchmark = benchmark_for(q, dataset)
        if benchmark is not None and benchmark.name in chosen and benchmark.chosen_rules(q) is not None:
            q.metadata[RULES_KEY] = chosen[benchmark.name]


def rules_of(question: Question, dataset: str | None = None) -> str:
    """The name of the rules ``question`` is scored by: its benchmark's (with the rule set the
    question chose), or ``contract``."""
    benchmark = benchmark_for(question, dataset)
    return benchmark.rules_of(question) if benchmark is not None else "contract"


def rules_count(questions: Iterable[Question], dataset: str | None = None) -> dict[str, int]:
    """Questions per scoring rules in force (``esibench:paper``, ``autotool``, ``contract``...)."""
    from collections import Counter

    return dict(Counter(rules_of(q, dataset) for q in questions))
