"""AutoTool's evaluation metrics from finished episodes: per-benchmark headline numbers, the share
of each reasoning mode, and the cost of an answer in each mode.

* :func:`summarize` - per split and overall: accuracy, share of tool-on episodes, zoom calls per
  episode, tokens and latency, plus the benchmark's own figure (HR-Bench accuracy averaged over
  option cycles, POPE accuracy/precision/recall/F1/yes-ratio, grounding mean IoU, DynaMath's
  worst case, WeMath's four-dimensional metrics of :mod:`eviseek.autotool.wemath`).
* :func:`mode_shares` - the share of tool-on and tool-off episodes per benchmark: what the
  AutoTool paper's Figure 3 plots (the paper: V* and HR-Bench lean to tool-on, POPE to tool-off).
* :func:`mode_costs` - per mode: model calls, tokens and latency per answer. The paper's Table 8
  compares inference time of AutoTool and DeepEyes per benchmark; splitting the cost by mode
  within one model is ours (it shows what a tool-on answer costs over a tool-off one).

The benchmark of a question is its ``family`` (``vstar``, ``hrbench4k``, ``pope``, ``grounding``,
``mathvista``...); its kind (``metadata["autotool_kind"]``) picks the headline metrics.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from eviseek.autotool.pope import pope_counts
from eviseek.autotool.wemath import four_dimensional
from eviseek.types import EpisodeResult, Question

MODES = ("tool_on", "tool_off")


class SplitMetrics(BaseModel):
    """Metrics of one split (or of all questions)."""

    name: str
    n: int
    accuracy: float
    tool_on_share: float
    """Share of episodes whose mode was ``tool_on``."""
    calls_per_episode: float
    """Zoom calls that reached the tool, per episode."""
    input_tokens: float | None
    output_tokens: float | None
    latency_s: float
    """Mean wall time of an episode."""
    errors: int = 0
    extra: dict[str, float] = Field(default_factory=dict)


class EvalSummary(BaseModel):
    """An AutoTool run's numbers (``eviseek autotool eval`` prints and saves them)."""

    model: str
    dataset: str
    kind: str
    overall: SplitMetrics
    splits: list[SplitMetrics]
    by_mode: dict[str, float] = Field(default_factory=dict)
    """Accuracy of tool-on and tool-off episodes."""
    headline: dict[str, float] = Field(default_factory=dict)
    """The benchmark's official number(s): cycle-averaged accuracy, POPE F1, ..."""

    def table(self) -> str:
        """A plain-text table for the terminal."""
        cols = f"{'acc':>8}{'tool_on':>9}{'calls':>7}{'in_tok':>9}{'out_tok':>9}{'lat_s':>8}"
        head = f"{'split':<22}{'n':>5}{cols}"
        lines = [f"{self.dataset} - {self.model}", head]
        for m in [*self.splits, self.overall]:

            def f(v: float | None) -> str:
                return "-" if v is None else f"{v:.0f}"

            lines.append(
                f"{m.name:<22}{m.n:>5}{m.accuracy:>8.3f}{m.tool_on_share:>9.2f}{m.calls_per_episode:>7.2f}"
                f"{f(m.input_tokens):>9}{f(m.output_tokens):>9}{m.latency_s:>8.2f}"
            )
        for k, v in self.headline.items():
            lines.append(f"{k}: {v:.4f}")
        for k, v in self.by_mode.items():
            lines.append(f"accuracy when {k}: {v:.3f}")
        return "\n".join(lines)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _known_mean(values: Iterable[int | float | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _split(name: str, rows: list[EpisodeResult]) -> SplitMetrics:
    ins = [r.input_tokens for r in rows]
    outs = [r.output_tokens for r in rows]
    return SplitMetrics(
        name=name,
        n=len(rows),
        accuracy=_mean([1.0 if r.correct else 0.0 for r in rows]),
        tool_on_share=_mean([1.0 if r.mode == "tool_on" else 0.0 for r in rows]),
        calls_per_episode=_mean([float(r.steps) for r in rows]),
        input_tokens=None if any(v is None for v in ins) else _mean([float(v or 0) for v in ins]),
        output_tokens=None if any(v is None for v in outs) else _mean([float(v or 0) for v in outs]),
        latency_s=_mean([r.wall_time_s for r in rows]),
        errors=sum(1 for r in rows if r.error),
    )


def pope_metrics(rows: list[EpisodeResult]) -> dict[str, float]:
    """POPE's accuracy, precision, recall, F1 and yes-ratio ("yes" is the positive class), each
    answer read by POPE's official rule (:func:`eviseek.autotool.pope.pope_answer`)."""
    return pope_counts([(r.answer, str(r.ground_truth)) for r in rows])


def cycle_accuracy(rows: list[EpisodeResult], cycle_of: dict[str, str]) -> dict[str, float]:
    """HR-Bench's figure: accuracy per category within each option cycle, averaged over cycles."""
    per_cycle: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in rows:
        per_cycle[cycle_of.get(r.question_id, "0")].append(r)
    sums: dict[str, float] = defaultdict(float)
    for members in per_cycle.values():
        by_cat: dict[str, list[EpisodeResult]] = defaultdict(list)
        for r in members:
            by_cat[r.subcategory or "all"].append(r)
        for cat, rs in by_cat.items():
            sums[cat] += _mean([1.0 if r.correct else 0.0 for r in rs])
        sums["overall"] += _mean([1.0 if r.correct else 0.0 for r in members])
    k = len(per_cycle) or 1
    return {f"cycle_avg_{cat}": v / k for cat, v in sums.items()}


def dynamath_worst_case(rows: list[EpisodeResult], questions: Sequence[Question]) -> dict[str, float]:
    """DynaMath's second number: a seed question counts only when every one of its generated
    variants (``metadata["qid"]``, one row per ``varid``) is answered right. Empty unless the
    questions are DynaMath's and carry their ``qid``."""
    by_id = {q.id: q for q in questions}
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        q = by_id.get(r.question_id)
        if q is None or q.metadata.get("benchmark") != "dynamath" or q.metadata.get("qid") is None:
            continue
        groups[str(q.metadata["qid"])].append(bool(r.correct))
    if not groups:
        return {}
    return {"dynamath_worst_case": _mean([1.0 if all(v) else 0.0 for v in groups.values()])}


def reasonseg_metrics(rows: list[EpisodeResult], questions: Sequence[Question]) -> dict[str, float]:
    """Ours: LISA's gIoU and cIoU with each answer box's rectangle as its mask (in original
    pixels; see :mod:`eviseek.autotool.reasonseg`). The paper's ReasonSeg number is the
    ``accuracy`` beside it: the share of answer boxes with IoU >= 0.5 against the target's box."""
    import json

    from eviseek.autotool.reasonseg import giou_ciou, question_iou

    by_id = {q.id: q for q in questions}
    pairs = []
    for r in rows:
        q = by_id.get(r.question_id)
        if q is None:
            continue
        box = None
        try:
            value = json.loads(r.answer) if r.answer else None
            if isinstance(value, list) and len(value) == 4:
                box = [float(v) for v in value]
        except (TypeError, ValueError):
            box = None
        pairs.append(question_iou(q, box))
    return giou_ciou(pairs)


def benchmark_kind(questions: Sequence[Question]) -> str:
    """The kind the questions name (``metadata["autotool_kind"]``), or ``other``."""
    kinds = {str(q.metadata.get("autotool_kind", "other")) for q in questions}
    return kinds.pop() if len(kinds) == 1 else "other"


def headline_metrics(rows: list[EpisodeResult], questions: Sequence[Question], kind: str) -> dict[str, float]:
    """Accuracy plus the benchmark's own figure(s) for ``kind``."""
    headline: dict[str, float] = {"accuracy": _mean([1.0 if r.correct else 0.0 for r in rows])}
    if kind == "hrbench":
        cycles = {q.id: str(q.metadata.get("cycle", "0")) for q in questions}
        headline.update(cycle_accuracy(rows, cycles))
    elif kind == "pope":
        headline.update({f"pope_{k}": v for k, v in pope_metrics(rows).items()})
    elif kind == "grounding":
        headline["mean_iou"] = _mean([r.score or 0.0 for r in rows])
    elif kind == "reasonseg":
        headline.update(reasonseg_metrics(rows, questions))
    elif kind == "reasoning":
        headline.update(dynamath_worst_case(rows, questions))
        headline.update(four_dimensional(rows, questions).headline())
    return headline


def summarize(
    rows: list[EpisodeResult], questions: list[Question], *, model: str, dataset: str, kind: str | None = None
) -> EvalSummary:
    """Metrics of finished episodes (see the module docstring); ``kind`` defaults to the questions'."""
    kind = kind or benchmark_kind(questions)
    by_split: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in rows:
        by_split[r.subcategory or "all"].append(r)
    splits = [_split(name, rs) for name, rs in sorted(by_split.items())]
    if kind == "pope":
        for s in splits:
            s.extra = pope_metrics(by_split[s.name])
    by_mode = {}
    for mode in MODES:
        rs = [r for r in rows if r.mode == mode]
        if rs:
            by_mode[mode] = _mean([1.0 if r.correct else 0.0 for r in rs])
    return EvalSummary(
        model=model,
        dataset=dataset,
        kind=kind,
        overall=_split("overall", rows),
        splits=splits,
        by_mode=by_mode,
        headline=headline_metrics(rows, questions, kind),
    )


# --------------------------------------------------------------------------------------------
# Mode frequency (Figure 3) and cost per mode


class ModeShare(BaseModel):
    """How often each mode was chosen on one benchmark."""

    benchmark: str
    n: int
    """Finished episodes (failed ones excluded: they chose no mode the model stood by)."""
    tool_on: float
    tool_off: float
    undeclared: float = 0.0
    """Episodes with no mode at all (a model that never wrote a mode token and never acted)."""


def mode_shares(rows: Iterable[EpisodeResult]) -> list[ModeShare]:
    """The share of tool-on / tool-off episodes per benchmark (family), then over all of them."""
    by_bench: dict[str, list[EpisodeResult]] = defaultdict(list)
    done = [r for r in rows if r.error is None]
    for r in done:
        by_bench[r.family or "-"].append(r)
    groups = sorted(by_bench.items())
    if len(groups) > 1:
        groups.append(("all", done))
    out = []
    for name, rs in groups:
        n = len(rs)
        on = sum(1 for r in rs if r.mode == "tool_on")
        off = sum(1 for r in rs if r.mode == "tool_off")
        out.append(
            ModeShare(benchmark=name, n=n, tool_on=on / n, tool_off=off / n, undeclared=(n - on - off) / n)
        )
    return out


class ModeCost(BaseModel):
    """What an answer costs in one mode (means over the mode's finished episodes)."""

    mode: str
    """``tool_on``, ``tool_off`` or ``all``."""
    n: int
    accuracy: float
    calls: float
    """Model calls per answer."""
    zoom_steps: float
    """Zoom calls that reached the tool, per answer."""
    input_tokens: float | None
    output_tokens: float | None
    latency_s: float
    """Wall time per answer (the whole episode)."""


def mode_costs(rows: Iterable[EpisodeResult]) -> list[ModeCost]:
    """Calls, tokens and latency per answer, split by mode (then over all finished episodes)."""
    done = [r for r in rows if r.error is None]
    out = []
    for mode in (*MODES, "all"):
        rs = done if mode == "all" else [r for r in done if r.mode == mode]
        if not rs:
            continue
        out.append(
            ModeCost(
                mode=mode,
                n=len(rs),
                accuracy=_mean([1.0 if r.correct else 0.0 for r in rs]),
                calls=_mean([float(r.calls) for r in rs]),
                zoom_steps=_mean([float(r.steps) for r in rs]),
                input_tokens=_known_mean(r.input_tokens for r in rs),
                output_tokens=_known_mean(r.output_tokens for r in rs),
                latency_s=_mean([r.wall_time_s for r in rs]),
            )
        )
    return out
