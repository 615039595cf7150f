"""Read a run directory back for offline analysis: configuration, questions, results, support.

Layout (written by ``eviseek eval``)::

    RUN_DIR/run.json          the run configuration (agents in order, model, dataset, ...)
    RUN_DIR/questions.jsonl   the Question records evaluated: the denominators
    RUN_DIR/results.sqlite    one row per finished (agent, question_id)
    RUN_DIR/episodes/<agent>/<question_id>/trajectory.json
    RUN_DIR/support.jsonl     visual-support grades from ``eviseek judge`` (optional)

Results come from ``results.sqlite`` when present, otherwise from the ``result`` saved in each
trajectory (both are written by the runner; the trajectories alone are enough to rebuild
everything). An answer that was never scored is scored here with :mod:`eviseek.answers`. A
support grade saved with the result (exact, from the environment) wins over a judge grade.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eviseek.errors import ConfigError
from eviseek.eval.benchmark import Benchmark, benchmark_for
from eviseek.eval.judge import load_support_grades
from eviseek.eval.metrics import NO_FAMILY, NO_SUBCATEGORY, QuestionKey, SystemResults
from eviseek.types import EpisodeResult, Question
from eviseek.types.question_file import read_questions
from eviseek.types.reading import MAX_TRAJECTORY_BYTES, read_text_capped
from eviseek.types.rundir import EPISODES_DIR, QUESTIONS_FILE, RUN_FILE, STORE_FILE, TRAJECTORY_FILE, RunDir

__all__ = [
    "EPISODES_DIR",
    "RUN_FILE",
    "STORE_FILE",
    "RunData",
    "load_run",
    "run_labels",
    "safe_component",
    "systems_of",
]


@dataclass
class RunData:
    """One run directory, loaded."""

    path: Path
    config: dict[str, Any]
    model: str
    agents: list[str]
    """Agents in the order the run listed them (then any others found, in order of appearance)."""
    questions: list[Question]
    results: dict[str, dict[str, EpisodeResult]]
    """Results per agent, keyed by question id."""
    episode_dirs: dict[tuple[str, str], Path] = field(default_factory=dict)
    """(agent, question_id) -> the episode's folder, for the episodes that have one."""
    support_sources: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per agent: how many results took their support from the environment, from the judge
    (``support.jsonl``), had no answer-time image at all (a failed episode: support 0), or
    have none."""
    warnings: list[str] = field(default_factory=list)
    label: str = ""

    @property
    def dataset(self) -> str | None:
        """The run's dataset spec (``None`` when its ``run.json`` names none)."""
        value = self.config.get("dataset")
        return value if isinstance(value, str) else None

    def benchmarks(self) -> list[Benchmark]:
        """The benchmarks its questions belong to, in order of first appearance (none for
        questions no benchmark recognises)."""
        found: dict[str, Benchmark] = {}
        for q in self.questions:
            benchmark = benchmark_for(q, self.dataset)
            if benchmark is not None:
                found.setdefault(benchmark.name, benchmark)
        return list(found.values())

    def report_sections(self) -> set[str]:
        """The report sections its benchmarks add (``express``, ``autotool``...)."""
        return {section for b in self.benchmarks() for section in b.report_sections}

    def question_keys(self) -> list[QuestionKey]:
        """The metrics view of the question list (empty family/subcategory get a placeholder)."""
        return [
            QuestionKey(id=q.id, family=q.family or NO_FAMILY, subcategory=q.subcategory or NO_SUBCATEGORY)
            for q in self.questions
        ]


def _read_questions(run: Path) -> list[Question] | None:
    if not (run / QUESTIONS_FILE).exists():
        return None
    # read_questions resolves image paths (question_images/...) against the file's folder, so
    # episode pages built from these questions find the task reference images.
    return read_questions(run / QUESTIONS_FILE)


def _trajectory_results(run: Path) -> tuple[list[EpisodeResult], dict[tuple[str, str], Path]]:
    """Results saved inside trajectories; reads only the small fields, not the whole record."""
    results: list[EpisodeResult] = []
    dirs: dict[tuple[str, str], Path] = {}
    root = run / EPISODES_DIR
    if not root.is_dir():
        return results, dirs
    for path in sorted(root.rglob(TRAJECTORY_FILE)):
        try:
            data = json.loads(read_text_capped(path, MAX_TRAJECTORY_BYTES, "a trajectory"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
        key = (str(data.get("agent", "")), str(data.get("question_id", "")))
        dirs[key] = path.parent
        if data.get("result") is not None:
            results.append(EpisodeResult.model_validate(data["result"]))
    return results, dirs


def _store_results(run: Path) -> list[EpisodeResult] | None:
    if not (run / STORE_FILE).exists():
        return None
    from eviseek.eval.store import load_results

    return load_results(run)


def _unstored_results(run: Path, stored: list[EpisodeResult]) -> list[EpisodeResult]:
    """Finished episodes saved under ``episodes/`` whose folder belongs to no stored row."""
    from eviseek.eval.recover import saved_result

    known = {_episode_dir(run, r.agent, r.question_id) for r in stored}
    out = []
    for path in RunDir(run).trajectory_files():
        if path.parent not in known:
            result = saved_result(path.parent)
            if result is not None:
                out.append(result)
    return out


def _episode_dir(run: Path, agent: str, qid: str) -> Path:
    return RunDir(run).episode_dir(agent, qid)


def _rescore(result: EpisodeResult, question: Question | None, dataset: str | None) -> bool:
    """Score an unscored answer in place by its answer contract, or by the rule set the question
    chose when its benchmark has rule sets (ESI-Bench's); True if it was scored here."""
    if result.correct is not None or result.error is not None or question is None:
        return False
    if question.ground_truth is None:
        return False
    raw = result.raw_answer if result.raw_answer is not None else result.answer
    if raw is None:
        return False
    from eviseek.answers import score_answer

    benchmark = benchmark_for(question, dataset)
    rules = benchmark.chosen_rules(question) if benchmark is not None else None
    verdict = score_answer(question, raw, rules=rules)
    result.answer, result.correct, result.score = verdict.answer, verdict.correct, verdict.score
    return True


def _finished_results(
    run: Path, warnings: list[str]
) -> tuple[list[EpisodeResult], dict[tuple[str, str], Path]]:
    """Every finished episode's result (the store's rows, else the saved trajectories), with the
    episode folders already located; a warning says where results came from when not the store."""
    stored = _store_results(run)
    if stored:
        # The store is authoritative; trajectories are only located, not parsed (thousands of
        # them), except those of finished episodes that have no row (see eval.recover).
        results_list = stored
        dirs: dict[tuple[str, str], Path] = {}
        extra = _unstored_results(run, stored)
        if extra:
            results_list = stored + extra
            warnings.append(
                f"{run.name}: {len(extra)} finished episode(s) have no row in {STORE_FILE}; read from "
                f"their saved trajectories (`eviseek score {run} --rebuild` writes them in)"
            )
    else:
        results_list, dirs = _trajectory_results(run)
        if results_list:
            why = "no" if stored is None else "an empty"
            warnings.append(
                f"{run.name}: {why} {STORE_FILE}; results read from the saved trajectories "
                f"(`eviseek score {run} --rebuild` writes the store back)"
            )
    if not results_list:
        raise ValueError(
            f"{run} has no finished episodes: neither {STORE_FILE} nor any "
            f"{EPISODES_DIR}/<agent>/<question_id>/trajectory.json with a result"
        )
    return results_list, dirs


def _questions_or_stand_ins(
    run: Path, results_list: list[EpisodeResult], warnings: list[str]
) -> list[Question]:
    """The run's questions, or (``questions.jsonl`` missing) one stand-in per recorded question."""
    questions = _read_questions(run)
    if questions is not None:
        return questions
    warnings.append(
        f"{run.name}: {QUESTIONS_FILE} is missing; each agent is scored on the episodes it "
        "recorded, so missing episodes cannot count as incorrect"
    )
    seen: dict[str, Question] = {}
    for r in results_list:
        seen.setdefault(
            r.question_id,
            Question(
                id=r.question_id,
                text="",
                family=r.family,
                subcategory=r.subcategory,
                ground_truth=r.ground_truth,
            ),
        )
    return list(seen.values())


def _per_agent(
    run: Path,
    agents: list[str],
    results_list: list[EpisodeResult],
    by_id: dict[str, Question],
    warnings: list[str],
    dataset: str | None,
) -> tuple[dict[str, dict[str, EpisodeResult]], dict[str, dict[str, int]]]:
    """Results per agent and question (unscored answers scored, judge grades filled in), and where
    each result's support came from."""
    results: dict[str, dict[str, EpisodeResult]] = {a: {} for a in agents}
    grades = load_support_grades(run)
    sources = {a: {"environment": 0, "judge": 0, "empty": 0, "none": 0} for a in agents}
    rescored = 0
    strangers: set[str] = set()
    for r in results_list:
        r = r.model_copy()  # shallow: only top-level fields are replaced below
        if r.question_id not in by_id:
            strangers.add(r.question_id)
            continue
        rescored += _rescore(r, by_id.get(r.question_id), dataset)
        if r.support is not None:
            sources[r.agent]["environment"] += 1
        else:
            grade = grades.get((r.agent, r.question_id))
            if grade is not None and grade.grade is not None:
                r.support = grade.grade
                sources[r.agent]["judge"] += 1
            elif r.error is not None and r.images_in_answer == 0:
                sources[r.agent]["empty"] += 1  # graded 0 by the metrics: nothing was shown
            else:
                sources[r.agent]["none"] += 1
        results[r.agent][r.question_id] = r
    if strangers:
        warnings.append(
            f"{run.name}: {len(strangers)} result(s) for questions not in {QUESTIONS_FILE} were left out "
            f"(e.g. {sorted(strangers)[:3]})"
        )
    if rescored:
        warnings.append(f"{run.name}: {rescored} unscored answer(s) were scored offline with eviseek.answers")
    return results, sources


def load_run(run_dir: str | Path, *, label: str = "", plugins: Sequence[str] = ()) -> RunData:
    """Load everything the report needs from one run directory (``plugins``: imported before the
    run's own, see :func:`eviseek.eval.run_benchmarks.open_benchmarks`)."""
    run = Path(run_dir)
    if not run.is_dir():
        raise FileNotFoundError(f"run directory {run} does not exist")
    config = RunDir(run).read_config()
    warnings: list[str] = []
    results_list, dirs = _finished_results(run, warnings)
    questions = _questions_or_stand_ins(run, results_list, warnings)
    from eviseek.eval.run_benchmarks import open_benchmarks

    # A plugin benchmark's scorer, taxonomy and sections: looked up by the recorded name.
    warnings += open_benchmarks(run, config, questions, plugins=plugins)
    by_id = {q.id: q for q in questions}
    listed = [str(a) for a in config.get("agents", []) if isinstance(a, str)]
    agents = list(dict.fromkeys(listed + [r.agent for r in results_list]))
    dataset = config.get("dataset")
    results, sources = _per_agent(
        run, agents, results_list, by_id, warnings, dataset if isinstance(dataset, str) else None
    )
    failure = _failure_warning(run, [r for per in results.values() for r in per.values()])
    if failure:
        warnings.insert(0, failure)

    for agent in agents:
        for qid in results[agent]:
            d = dirs.get((agent, qid)) or _episode_dir(run, agent, qid)
            if (d / TRAJECTORY_FILE).exists():
                dirs[(agent, qid)] = d
    model = str(
        config.get("model") or next((r.model for r in results_list if r.model), "") or "unknown model"
    )
    return RunData(
        path=run,
        config=config,
        model=model,
        agents=agents,
        questions=questions,
        results=results,
        episode_dirs={k: v for k, v in dirs.items() if k[0] in results and k[1] in by_id},
        support_sources=sources,
        warnings=warnings,
        label=label,
    )


def _failure_warning(run: Path, results: list[EpisodeResult]) -> str | None:
    """One line on failed episodes: how many, and the most common reason (the why a reader needs)."""
    failed = [r for r in results if r.error is not None]
    if not failed:
        return None
    reasons = Counter(str(r.error) for r in failed)
    reason, count = reasons.most_common(1)[0]
    reason = reason if len(reason) <= 200 else reason[:197] + "..."
    how_many = "every episode" if len(failed) == len(results) else f"{len(failed)} of {len(results)} episodes"
    others = f"; {len(reasons) - 1} other reason(s)" if len(reasons) > 1 else ""
    return (
        f"{run.name}: {how_many} failed and count as incorrect. Most common reason ({count}x): "
        f"{reason}{others}. Fix the cause and rerun `eviseek eval --out {run} --retry-failed`"
    )


def run_labels(runs: list[RunData]) -> list[str]:
    """Short distinct labels: the model name when models differ, else the folder name."""
    names = [r.model.split("/", 1)[-1] for r in runs]
    if len(set(names)) != len(names):
        names = [r.path.resolve().name for r in runs]
    if len(set(names)) != len(names):
        names = [f"{n} ({i + 1})" for i, n in enumerate(names)]
    return names


def safe_component(name: str) -> str:
    """A file-name-safe form of a label (for per-run folders in multi-run reports)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "run"


def systems_of(runs: list[RunData]) -> list[SystemResults]:
    """One :class:`SystemResults` per (run, agent); labels carry the run only when there are several."""
    if len(runs) > 1 or any(not r.label for r in runs):
        for run, lab in zip(runs, run_labels(runs), strict=True):
            run.label = run.label or lab
    out: list[SystemResults] = []
    for run in runs:
        keys = run.question_keys()
        taxonomy = next((b.taxonomy for b in run.benchmarks() if b.taxonomy is not None), None)
        for agent in run.agents:
            label = agent if len(runs) == 1 else f"{run.label} / {agent}"
            out.append(
                SystemResults(
                    label=label,
                    agent=agent,
                    questions=keys,
                    results=run.results[agent],
                    model=run.model,
                    run=run.label,
                    taxonomy=taxonomy,
                )
            )
    return out
