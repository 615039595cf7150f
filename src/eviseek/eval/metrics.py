"""Paper metrics computed from episode results: accuracy, support decomposition, resource use.

The unit is a *system*: one agent evaluated in one run (one model) over a fixed list of
questions. The question list is the denominator: a question with no recorded episode, a failed
episode, or a missing or unscored answer all count as incorrect, as in the paper's protocol
(appendix A). Only binary correctness enters accuracy; soft task scores are reported apart.

Visual support (the grade delta_i of the answer-time images, in [0, 1]) decomposes each
question's unit mass into four parts (Figure 2):

    C  = 100/N * sum(delta_i * s_i)          supported and correct
    GW = 100/N * sum(delta_i * (1 - s_i))    supported but wrong
    P  = Acc - C                             correct without support
    N  = 100 - Acc - GW                      wrong without support

A failed episode that never reached an answering call has no answer-time images, so its support
is 0 by the protocol (not unknown). Support that was never graded (``None``) is not zero: when
some questions lack a grade the decomposition is computed over the graded ones and says so
(``complete=False``); with no grade at all it is not available (``None``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, Field

from eviseek.eval.benchmark import Taxonomy
from eviseek.eval.stats import PAPER_SEED, PairedTest, paired_test, with_holm
from eviseek.types import EpisodeResult

NO_FAMILY = "(no family)"
NO_SUBCATEGORY = "(no subcategory)"


class QuestionKey(BaseModel):
    """The part of a question that metrics need: its id and where it is tabulated."""

    id: str
    family: str = NO_FAMILY
    subcategory: str = NO_SUBCATEGORY


@dataclass(frozen=True)
class Outcome:
    """One question's verdict for one system, with the reason when it is not a clean answer.

    A plain dataclass (never saved): reports build tens of thousands of these.
    """

    question_id: str
    family: str
    subcategory: str
    correct: bool
    """The binary verdict s_i used in every accuracy figure."""
    support: float | None
    status: str
    """``answered``, ``missing`` (no episode recorded), ``failed`` (episode error),
    ``no_answer`` (nothing parseable) or ``unscored`` (``correct`` was never set)."""
    score: float = 0.0
    """The task's soft score in [0, 1] (ESI-Bench's partial credit for counts; equal to
    ``correct`` for most tasks); 0 whenever ``correct`` is set false by a failure."""


@dataclass
class SystemResults:
    """One agent in one run: its question list (the denominator) and its recorded results."""

    label: str
    """Unique display label, e.g. ``eviseek`` or ``qwen3-vl-32b / eviseek``."""
    agent: str
    questions: list[QuestionKey]
    results: dict[str, EpisodeResult] = field(default_factory=dict)
    """Results keyed by question id."""
    model: str = ""
    run: str = ""
    """Label of the run directory this system came from (groups systems in tables)."""
    taxonomy: Taxonomy | None = None
    """The order of its benchmark's families and subcategories (``None``: first seen first)."""

    def __post_init__(self) -> None:
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"system {self.label!r}: duplicate question ids {dupes[:5]}; ids must be unique")

    def outcomes(self) -> list[Outcome]:
        """The verdict for every question in the denominator, in question order."""
        return [outcome_of(q, self.results.get(q.id)) for q in self.questions]


def outcome_of(question: QuestionKey, result: EpisodeResult | None) -> Outcome:
    """Turn a (possibly absent) result into the binary verdict the paper's tables use."""
    if result is None:
        status, correct, support = "missing", False, None
    else:
        support = _check_support(result)
        if support is None and result.error is not None and result.images_in_answer == 0:
            # The episode died before any answering call: its answer-time image set is empty,
            # which the protocol grades 0 (the judge does the same without being asked).
            support = 0.0
        if result.error is not None:
            status, correct = "failed", False
        elif result.answer is None:
            status, correct = "no_answer", False
        elif result.correct is None:
            status, correct = "unscored", False
        else:
            status, correct = "answered", bool(result.correct)
    score = float(correct)
    if result is not None and status == "answered" and result.score is not None:
        score = float(result.score)
    return Outcome(
        question_id=question.id,
        family=question.family,
        subcategory=question.subcategory,
        correct=correct,
        support=support,
        status=status,
        score=score,
    )


def _check_support(result: EpisodeResult) -> float | None:
    s = result.support
    if s is None:
        return None
    if not 0.0 <= s <= 1.0:
        raise ValueError(
            f"support grade {s} for {result.agent}/{result.question_id} is outside [0, 1]; "
            "grades are 0, 0.5 or 1 (judge) or a fraction of decisive evidence (environment)"
        )
    return float(s)


# ----------------------------------------------------------------------------- accuracy


def accuracy(outcomes: Sequence[Outcome]) -> float | None:
    """Question-weighted accuracy in percent (``None`` for no questions)."""
    if not outcomes:
        return None
    return 100.0 * sum(o.correct for o in outcomes) / len(outcomes)


def soft_accuracy(outcomes: Sequence[Outcome]) -> float | None:
    """Question-weighted mean soft score in percent (``None`` for no questions)."""
    if not outcomes:
        return None
    return 100.0 * sum(o.score for o in outcomes) / len(outcomes)


class AccuracyRow(BaseModel):
    """Accuracy of every system on one slice of the benchmark."""

    level: str
    """``overall``, ``family`` or ``subcategory``."""
    family: str = ""
    subcategory: str = ""
    n: dict[str, int] = Field(default_factory=dict)
    """Questions in this slice per system label (the #Q column)."""
    acc: dict[str, float | None] = Field(default_factory=dict)
    """Accuracy (%) per system label; ``None`` when the system has no question here."""
    soft: dict[str, float | None] = Field(default_factory=dict)
    """Mean soft score (%) per system label (partial credit for counts, as ESI-Bench scores)."""

    @property
    def name(self) -> str:
        """The row's display name."""
        return {"overall": "Overall", "family": self.family}.get(self.level, self.subcategory)


def _slices(systems: Sequence[SystemResults]) -> list[tuple[str, str]]:
    """(family, subcategory) pairs in the order of the first system's benchmark taxonomy (ESI-Bench's:
    the paper's Table 5, :mod:`eviseek.types.taxonomy`), then any others in order of first
    appearance."""
    seen: dict[tuple[str, str], None] = {}
    for system in systems:
        for q in system.questions:
            seen.setdefault((q.family, q.subcategory), None)
    taxonomy = next((s.taxonomy for s in systems if s.taxonomy is not None), None)
    if taxonomy is None:
        return list(seen)
    return sorted(seen, key=lambda fs: taxonomy.rank(*fs))


def _families(slices: Iterable[tuple[str, str]]) -> list[str]:
    return list(dict.fromkeys(f for f, _ in slices))


R = TypeVar("R")


def _sliced_rows(
    systems: Sequence[SystemResults], build: Callable[[str, str, str, dict[str, list[Outcome]]], R]
) -> list[R]:
    """One row per family, each followed by its subcategories, then the overall row.

    ``build(level, family, subcategory, chosen)`` makes a row from ``chosen``: each system's
    outcomes in that slice, keyed by system label in the order ``systems`` lists them.
    """
    per_system = {s.label: s.outcomes() for s in systems}
    slices = _slices(systems)

    def pick(family: str, subcategory: str | None) -> dict[str, list[Outcome]]:
        return {
            label: [
                o
                for o in outs
                if o.family == family and (subcategory is None or o.subcategory == subcategory)
            ]
            for label, outs in per_system.items()
        }

    rows: list[R] = []
    for fam in _families(slices):
        rows.append(build("family", fam, "", pick(fam, None)))
        for f, sub in slices:
            if f == fam:
                rows.append(build("subcategory", fam, sub, pick(fam, sub)))
    rows.append(build("overall", "", "", {label: list(outs) for label, outs in per_system.items()}))
    return rows


def accuracy_table(systems: Sequence[SystemResults]) -> list[AccuracyRow]:
    """Rows of Tables 1 and 5: each family, then its subcategories, then the overall row."""

    def row(level: str, family: str, subcategory: str, chosen: dict[str, list[Outcome]]) -> AccuracyRow:
        return AccuracyRow(
            level=level,
            family=family,
            subcategory=subcategory,
            n={label: len(outs) for label, outs in chosen.items()},
            acc={label: accuracy(outs) for label, outs in chosen.items()},
            soft={label: soft_accuracy(outs) for label, outs in chosen.items()},
        )

    return _sliced_rows(systems, row)


# ------------------------------------------------------------------ support decomposition


class SupportDecomposition(BaseModel):
    """Figure 2's split of accuracy by visual support, in percent of the graded questions."""

    n: int
    """Questions in the slice."""
    n_graded: int
    """Questions whose support was graded; the four parts are over these."""
    acc: float | None = None
    """Accuracy over the graded questions (equal to the slice accuracy when complete)."""
    C: float | None = None
    GW: float | None = None
    P: float | None = None
    N: float | None = None

    @property
    def complete(self) -> bool:
        """Whether every question in the slice was graded."""
        return self.n_graded == self.n

    @property
    def available(self) -> bool:
        """Whether any question was graded at all."""
        return self.n_graded > 0


def support_decomposition(outcomes: Sequence[Outcome]) -> SupportDecomposition:
    """C, GW, P and N over the graded outcomes (see the module docstring)."""
    graded = [o for o in outcomes if o.support is not None]
    out = SupportDecomposition(n=len(outcomes), n_graded=len(graded))
    if not graded:
        return out
    n = len(graded)
    acc = 100.0 * sum(o.correct for o in graded) / n
    c = 100.0 * sum(o.support * o.correct for o in graded if o.support is not None) / n
    gw = 100.0 * sum(o.support * (not o.correct) for o in graded if o.support is not None) / n
    out.acc, out.C, out.GW = acc, c, gw
    out.P = acc - c
    out.N = 100.0 - acc - gw
    return out


class SupportRow(BaseModel):
    """Support decomposition of every system on one slice (Table 6 shows its ``C``)."""

    level: str
    family: str = ""
    subcategory: str = ""
    parts: dict[str, SupportDecomposition] = Field(default_factory=dict)

    @property
    def name(self) -> str:
        """The row's display name."""
        return {"overall": "Overall", "family": self.family}.get(self.level, self.subcategory)


def support_table(systems: Sequence[SystemResults]) -> list[SupportRow]:
    """Per family, subcategory and overall decomposition for every system."""

    def row(level: str, family: str, subcategory: str, chosen: dict[str, list[Outcome]]) -> SupportRow:
        return SupportRow(
            level=level,
            family=family,
            subcategory=subcategory,
            parts={label: support_decomposition(outs) for label, outs in chosen.items()},
        )

    return _sliced_rows(systems, row)


# ------------------------------------------------------------------------ resource use


class ResourceUsage(BaseModel):
    """Mean cost per recorded episode (Table 2), with how many episodes each mean covers."""

    n_questions: int
    n_episodes: int
    """Episodes with a recorded result (failed ones included: their cost was spent)."""
    n_failed: int = 0
    steps: float | None = None
    calls: float | None = None
    tokens: float | None = None
    """Input + output + reasoning tokens (the paper's count; see :class:`eviseek.types.Usage`)."""
    input_tokens: float | None = None
    output_tokens: float | None = None
    reasoning_tokens: float | None = None
    images: float | None = None
    """Distinct images attached to the answering call (the paper's images per answer)."""
    wall_time_s: float | None = None
    tokens_per_step: float | None = None
    """Total tokens over total executed environment steps (the paper's Table 10), over the
    episodes whose tokens are known; ``None`` without steps."""
    steps_per_decision: float | None = None
    """Executed steps over decision calls, over the episodes that record decisions (an intent
    runs several primitives per decision; one action per decision gives 1)."""
    tokens_known: int = 0
    """Episodes whose token counts the server reported (token means are over these)."""
    status_counts: dict[str, int] = Field(default_factory=dict)


def _mean(values: Sequence[float | int | None]) -> tuple[float | None, int]:
    known = [float(v) for v in values if v is not None]
    return (sum(known) / len(known) if known else None), len(known)


def resource_usage(system: SystemResults) -> ResourceUsage:
    """Mean steps, calls, tokens, answer images and wall time over the system's episodes."""
    present = [system.results[q.id] for q in system.questions if q.id in system.results]
    statuses: dict[str, int] = {}
    for o in system.outcomes():
        statuses[o.status] = statuses.get(o.status, 0) + 1
    usage = ResourceUsage(
        n_questions=len(system.questions),
        n_episodes=len(present),
        n_failed=sum(r.error is not None for r in present),
        status_counts=statuses,
    )
    if not present:
        return usage
    usage.steps, _ = _mean([r.steps for r in present])
    usage.calls, _ = _mean([r.calls for r in present])
    usage.images, _ = _mean([r.images_in_answer for r in present])
    usage.wall_time_s, _ = _mean([r.wall_time_s for r in present])
    usage.tokens, usage.tokens_known = _mean([r.total_tokens for r in present])
    usage.input_tokens, _ = _mean([r.input_tokens for r in present])
    usage.output_tokens, _ = _mean([r.output_tokens for r in present])
    usage.reasoning_tokens, _ = _mean([r.reasoning_tokens for r in present])
    known = [r for r in present if r.total_tokens is not None]
    steps = sum(r.steps for r in known)
    if steps:
        usage.tokens_per_step = sum(r.total_tokens or 0 for r in known) / steps
    decided = [r for r in present if r.decisions]
    if decided:
        usage.steps_per_decision = sum(r.steps for r in decided) / sum(r.decisions or 0 for r in decided)
    return usage


def mean_score(system: SystemResults) -> float | None:
    """Mean task score (soft for counting) in percent, missing/failed as 0; None if never set."""
    outs = system.outcomes()
    if not outs:
        return None
    scores = []
    any_set = False
    for o in outs:
        r = system.results.get(o.question_id)
        if r is not None and r.score is not None and o.status in ("answered",):
            any_set = True
            scores.append(float(r.score))
        else:
            scores.append(0.0)
    return 100.0 * sum(scores) / len(scores) if any_set else None


# ----------------------------------------------------------------- paired comparisons


def default_pairs(systems: Sequence[SystemResults]) -> list[tuple[str, str]]:
    """Which systems to compare: every pair of agents within a run (later listed minus earlier
    listed, so a method listed after its baselines shows positive gains), then the same agent
    across runs (later run minus earlier run), e.g. one agent under two models."""
    pairs: list[tuple[str, str]] = []
    runs = list(dict.fromkeys(s.run for s in systems))
    for run in runs:
        members = [s for s in systems if s.run == run]
        for j in range(len(members)):
            for i in range(j):
                pairs.append((members[j].label, members[i].label))
    for i, first in enumerate(systems):
        for second in systems[i + 1 :]:
            if first.run != second.run and first.agent == second.agent:
                pairs.append((second.label, first.label))
    return pairs


def paired_comparisons(
    systems: Sequence[SystemResults],
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    n_resamples: int = 200_000,
    seed: int = PAPER_SEED,
    confidence: float = 0.95,
) -> list[PairedTest]:
    """Table 9: for each pair (A, B), A - B on the questions both were evaluated on.

    Missing answers and failed episodes count as incorrect; Holm's correction runs across all
    comparisons returned together. Pairs with no common question are skipped.
    """
    by_label = {s.label: s for s in systems}
    tests: list[PairedTest] = []
    for a_label, b_label in pairs if pairs is not None else default_pairs(systems):
        for label in (a_label, b_label):
            if label not in by_label:
                raise ValueError(f"unknown system {label!r} in pairs; known: {', '.join(by_label)}")
        a_out = {o.question_id: o.correct for o in by_label[a_label].outcomes()}
        b_out = {o.question_id: o.correct for o in by_label[b_label].outcomes()}
        common = [qid for qid in a_out if qid in b_out]
        if not common:
            continue
        test = paired_test(
            a_label,
            b_label,
            [a_out[q] for q in common],
            [b_out[q] for q in common],
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
        )
        only = len(a_out) - len(common), len(b_out) - len(common)
        if any(only):
            test.notes.append(
                f"paired on {len(common)} common questions "
                f"({only[0]} only in {a_label}, {only[1]} only in {b_label})"
            )
        tests.append(test)
    return with_holm(tests) if tests else []
