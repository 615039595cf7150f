"""The headline numbers of a finished run, saved as one small JSON file that can be committed.

A run directory holds every trajectory (hundreds of megabytes); the documentation shows a few
dozen numbers from it. :class:`ResultsFile` is those numbers: per agent and per slice (a task
family of the tabletop benchmark, a question kind of the houses), the question count, the
accuracy and the slice's ``C`` with percentile-bootstrap confidence intervals over the slice's
questions. ``scripts/results_file.py`` writes one from a run directory; the charts on the site
(``scripts/docs_charts.py``) and the numbers the pages quote are read from it, so a rerun
changes them all at once.

``C`` is one of two metrics, named in :attr:`ResultsFile.c_metric`:

- ``support``: the paper's support-weighted accuracy, the mean of correctness times the support
  grade of the answer-time images over the graded questions, as the report computes it (the
  tabletop's grades come from the simulator's masks);
- ``express``: EXPRESS-Bench's grounded correctness, the mean of ``100 * g * s / 5`` over the
  judge's grades (``eviseek judge --protocol express``), left out for an agent that never looks
  (Blind), as the report does.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from eviseek.eval.config import PAPER_SEED
from eviseek.eval.metrics import Outcome, SystemResults

CMetric = Literal["support", "express"]
SliceLevel = Literal["family", "subcategory"]

C_METRIC_TEXT: dict[str, str] = {
    "support": "C: correct and visually supported",
    "express": "C: EXPRESS-Bench's grounded correctness",
}
"""How a chart or page names each ``C``."""

OVERALL = "Overall"


class Estimate(BaseModel):
    """A mean in percent with its percentile-bootstrap interval (both ends in percent)."""

    value: float
    low: float
    high: float


class SliceResult(BaseModel):
    """One agent's numbers on one slice of the questions (or on all of them: ``Overall``)."""

    name: str
    n: int
    """Questions in the slice (the denominator: a missing or failed episode counts wrong)."""
    correct: int
    accuracy: Estimate
    C: Estimate | None = None
    """``None`` when the metric does not apply (an agent that never looks, or no grades)."""


class AgentResult(BaseModel):
    """One agent of the run: its slices in benchmark order, then ``Overall``."""

    agent: str
    label: str
    """How pages and charts name it."""
    slices: list[SliceResult]
    overall: SliceResult


class ResultsFile(BaseModel):
    """The committed summary of one run (see the module docstring)."""

    schema_version: int = 1
    name: str
    """The benchmark split, as pages name it (``tabletop:paper``, ``house:test``)."""
    model: str
    n_questions: int
    slice_level: SliceLevel
    c_metric: CMetric
    confidence: float
    n_resamples: int
    seed: int
    measured: str
    """UTC date the run started (``YYYY-MM-DD``; the summary's own date for a run that does not
    record it)."""
    commit: str
    """The commit the run was made at (from the run, else the checkout's)."""
    command: str
    """The commands that made the run, as a user would type them."""
    agents: list[AgentResult] = Field(default_factory=list)

    def agent(self, name: str) -> AgentResult:
        """The agent called ``name`` (its registry name)."""
        for a in self.agents:
            if a.agent == name:
                return a
        raise KeyError(f"{self.name}: no agent {name!r}; agents: {', '.join(a.agent for a in self.agents)}")


def read_results_file(path: str | Path) -> ResultsFile:
    """Load and validate a results file."""
    return ResultsFile.model_validate_json(Path(path).read_text(encoding="utf-8"))


def file_sha256(path: str | Path) -> str:
    """The content hash charts record of the results file they were drawn from (a clone keeps
    contents, not modification times)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def bootstrap_mean(values: Sequence[float], *, n_resamples: int, seed: int, confidence: float) -> Estimate:
    """Mean of ``values`` with the percentile-bootstrap interval over resampled items.

    Resampling draws item indices with replacement; the interval ends are the ``(1 - confidence)
    / 2`` and ``(1 + confidence) / 2`` quantiles of the resampled means.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("no values to average")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // x.size)  # bounded memory for large slices
    for start in range(0, n_resamples, chunk):
        k = min(chunk, n_resamples - start)
        means[start : start + k] = x[rng.integers(0, x.size, size=(k, x.size))].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return Estimate(value=round(float(x.mean()), 4), low=round(float(low), 4), high=round(float(high), 4))


def _slice(
    name: str,
    outcomes: Sequence[Outcome],
    c_values: Sequence[float] | None,
    *,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> SliceResult:
    acc = [100.0 * o.correct for o in outcomes]

    def boot(values: Sequence[float]) -> Estimate:
        return bootstrap_mean(values, n_resamples=n_resamples, seed=seed, confidence=confidence)

    return SliceResult(
        name=name,
        n=len(outcomes),
        correct=sum(o.correct for o in outcomes),
        accuracy=boot(acc),
        C=boot(c_values) if c_values else None,
    )


def _c_values(
    system: SystemResults,
    outcomes: Sequence[Outcome],
    c_metric: CMetric,
    grades: dict[tuple[str, str], tuple[float, int]],
) -> list[float] | None:
    """Per-question C contributions of ``outcomes`` (percent), or ``None`` if C does not apply."""
    if c_metric == "support":
        graded = [o for o in outcomes if o.support is not None]
        return [100.0 * (o.support or 0.0) * o.correct for o in graded] or None
    results = [system.results.get(o.question_id) for o in outcomes]
    if all(r is None or (r.steps == 0 and r.images_in_answer == 0) for r in results):
        return None  # question-only: grounding does not apply (the report shows a dash)
    values = []
    for o in outcomes:
        grade = grades.get((system.agent, o.question_id))
        if grade is not None:
            g, s = grade
            values.append(100.0 * g * min(max(s, 0), 5) / 5)
    return values or None


def summarize_systems(
    systems: Sequence[SystemResults],
    *,
    name: str,
    model: str,
    slice_level: SliceLevel,
    c_metric: CMetric,
    labels: dict[str, str] | None = None,
    grades: dict[tuple[str, str], tuple[float, int]] | None = None,
    n_resamples: int = 20_000,
    seed: int = PAPER_SEED,
    confidence: float = 0.95,
    measured: str | None = None,
    commit: str = "",
    command: str = "",
) -> ResultsFile:
    """A :class:`ResultsFile` from loaded systems (one per agent of one run).

    ``grades`` maps (agent, question id) to EXPRESS-Bench's (grounding, score) and is needed for
    ``c_metric="express"``. Slices keep the order the systems' benchmark gives them.
    """
    grades = grades or {}
    labels = labels or {}
    out = ResultsFile(
        name=name,
        model=model,
        n_questions=len(systems[0].questions) if systems else 0,
        slice_level=slice_level,
        c_metric=c_metric,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        measured=measured or datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        commit=commit,
        command=command,
    )

    def summary(name: str, chosen: list[Outcome], c: list[float] | None) -> SliceResult:
        return _slice(name, chosen, c, n_resamples=n_resamples, seed=seed, confidence=confidence)

    for system in systems:
        outcomes = system.outcomes()
        order: dict[str, None] = {}
        taxonomy = system.taxonomy
        pairs = [(q.family, q.subcategory) for q in system.questions]
        # Kinds the taxonomy does not rank (the houses' Open EQA kinds) tie; a stable sort of the
        # kinds in the order the run first holds them keeps them in that order, where a set's
        # order changed from one process to the next (string hashing) and with it the file.
        unique = list(dict.fromkeys(pairs))
        keys = sorted(unique, key=lambda fs: taxonomy.rank(*fs)) if taxonomy is not None else unique
        for family, sub in keys:
            order.setdefault(family if slice_level == "family" else sub, None)
        slices = []
        for slice_name in order:
            chosen = [
                o for o in outcomes if (o.family if slice_level == "family" else o.subcategory) == slice_name
            ]
            c = _c_values(system, chosen, c_metric, grades)
            slices.append(summary(slice_name, chosen, c))
        overall = summary(OVERALL, outcomes, _c_values(system, outcomes, c_metric, grades))
        out.agents.append(
            AgentResult(
                agent=system.agent,
                label=labels.get(system.agent, system.agent),
                slices=slices,
                overall=overall,
            )
        )
    return out


def summarize_run(
    run_dir: str | Path,
    *,
    name: str,
    slice_level: SliceLevel,
    c_metric: CMetric,
    labels: dict[str, str] | None = None,
    command: str = "",
    n_resamples: int = 20_000,
    seed: int = PAPER_SEED,
    confidence: float = 0.95,
) -> ResultsFile:
    """A :class:`ResultsFile` from a finished run directory (and its EXPRESS grades, if asked)."""
    from eviseek.eval.rundir import load_run, systems_of

    run = load_run(run_dir)
    grades: dict[tuple[str, str], tuple[float, int]] = {}
    if c_metric == "express":
        from eviseek.eval.express.judge import load_express_grades

        for key, grade in load_express_grades(run_dir).items():
            if grade.grounding is not None and grade.score is not None:
                grades[key] = (float(grade.grounding), int(grade.score))
        if not grades:
            raise ValueError(
                f"{run_dir} has no EXPRESS-Bench grades; run `eviseek judge {run_dir} --protocol express`"
            )
    commit = str(run.config.get("commit") or run.config.get("git_commit") or _checkout_commit())
    started = run.config.get("created_at")
    measured = (
        datetime.fromtimestamp(float(started), timezone.utc).strftime("%Y-%m-%d")
        if isinstance(started, (int, float))
        else None
    )
    return summarize_systems(
        systems_of([run]),
        name=name,
        model=run.model,
        slice_level=slice_level,
        c_metric=c_metric,
        labels=labels,
        grades=grades,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        measured=measured,
        commit=commit,
        command=command,
    )


def _checkout_commit() -> str:
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=Path(__file__).parent,
            check=False,
        )
    except OSError:
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""
