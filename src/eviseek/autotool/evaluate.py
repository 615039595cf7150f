"""Evaluate an AutoTool-style model on a benchmark: accuracy, mode choices and cost.

:func:`run_eval` writes a standard eviseek run directory::

    RUN_DIR/run.json            the settings (agents=["autotool"], model, dataset, seed, ...)
    RUN_DIR/questions.jsonl     the questions (images by path under RUN_DIR/source_images/)
    RUN_DIR/results.sqlite      one durable row per finished question (eviseek.eval.store)
    RUN_DIR/episodes/autotool/<question_id>/trajectory.json (+ images/)
    RUN_DIR/autotool_summary.json   the metrics below

and is resumable: finished questions are skipped, failed ones run again, and a run directory
refuses settings that would change the results. :func:`summarize` computes, per split and
overall, accuracy, the share of tool-on episodes, zoom calls per episode, tokens and latency
(the quantities of the AutoTool paper's Figure 3 and Table 8), plus per-benchmark metrics:
HR-Bench accuracy averaged over option cycles, POPE accuracy/precision/recall/F1/yes-ratio,
and grounding mean IoU.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek._version import __version__
from eviseek.answers import parse_yes_no
from eviseek.autotool.agent import AutoToolAgent
from eviseek.autotool.datasets import DatasetKind, load_benchmark
from eviseek.autotool.protocol import Mode
from eviseek.autotool.reasoning import REASONING_BENCHMARKS, score_reasoning
from eviseek.autotool.scoring import check_answer, iou, parse_box
from eviseek.errors import ConfigError
from eviseek.models.base import Model
from eviseek.types import EpisodeResult, GenerateConfig, Image, Question, Trajectory
from eviseek.types.question_file import questions_digest, write_questions

AGENT = "autotool"
SUMMARY_FILE = "autotool_summary.json"


class AutoToolEvalConfig(BaseModel):
    """Settings of an AutoTool evaluation; saved as ``run.json`` (readable as the main RunConfig)."""

    model: str
    dataset: str
    """``NAME:PATH`` (vstar, hrbench4k, hrbench8k, pope, refcoco) or ``synthetic:N``."""
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    shuffle_vstar: bool = True
    """Shuffle V*'s options with ``seed`` (its source lists the correct one first)."""
    agents: list[str] = Field(default_factory=lambda: [AGENT])
    agent_config: dict[str, Any] = Field(default_factory=dict)
    """``max_turns``, ``force_mode``, ``force_how``, ``max_pixels``, sampling settings."""
    budget: int = 5
    """The turn limit (mirrors ``agent_config["max_turns"]`` for the main harness's readers)."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    questions_sha256: str | None = None
    """SHA-256 of the run's ``questions.jsonl`` (:func:`~eviseek.types.question_file.questions_digest`),
    as in the main harness's run.json."""
    concurrency: int = Field(default=4, ge=1)
    base_url: str | None = None
    api_key_env: str | None = None
    eviseek_version: str = __version__
    created_at: float = Field(default_factory=time.time)


RESULT_SETTINGS = ("model", "dataset", "limit", "seed", "agent_config", "model_args", "questions_sha256")


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
    """Everything :func:`run_eval` reports."""

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


# ---------------------------------------------------------------- scoring


def score_episode(question: Question, traj: Trajectory) -> EpisodeResult:
    """Fill ``correct``/``score``/``answer`` of the trajectory's result from its ``<answer>``."""
    assert traj.result is not None
    result = traj.result
    text = result.answer
    kind = question.contract.kind
    if kind == "bbox":
        # The model's box is in the shown frame; ground truth is in original pixels.
        box = parse_box(text) if text is not None else None
        truth = parse_box(question.ground_truth)
        shown = traj.plan.get("shown_size")
        orig = traj.plan.get("original_size")
        if box is not None and truth is not None and shown and orig:
            sx, sy = orig[0] / shown[0], orig[1] / shown[1]
            box = [box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy]
            value = iou(box, truth)
            result.correct = value >= 0.5
            result.score = value
            result.answer = json.dumps([round(v, 1) for v in box])
        else:
            result.correct, result.score = False, 0.0
        return result
    if question.metadata.get("benchmark") in REASONING_BENCHMARKS:
        ok, canon = score_reasoning(text or "", question)
    else:
        ok, canon = check_answer(text, question.ground_truth, kind, question.contract.options)
    result.correct = ok
    result.score = 1.0 if ok else 0.0
    if canon is not None:
        result.answer = canon
    return result


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


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
    """POPE's accuracy, precision, recall, F1 and yes-ratio ("yes" is the positive class)."""
    tp = fp = tn = fn = yes = 0
    for r in rows:
        pred = parse_yes_no(r.answer) if r.answer else None
        truth = str(r.ground_truth).lower()
        if pred == "yes":
            yes += 1
        if truth == "yes":
            tp += pred == "yes"
            fn += pred != "yes"
        else:
            fp += pred == "yes"
            tn += pred != "yes"
    n = len(rows)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "accuracy": (tp + tn) / n if n else 0.0,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "yes_ratio": yes / n if n else 0.0,
    }


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


def summarize(
    rows: list[EpisodeResult], questions: list[Question], *, model: str, dataset: str, kind: str
) -> EvalSummary:
    """Metrics of finished episodes (see the module docstring)."""
    by_split: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in rows:
        by_split[r.subcategory or "all"].append(r)
    splits = [_split(name, rs) for name, rs in sorted(by_split.items())]
    overall = _split("overall", rows)
    by_mode = {}
    for mode in ("tool_on", "tool_off"):
        rs = [r for r in rows if r.mode == mode]
        if rs:
            by_mode[mode] = _mean([1.0 if r.correct else 0.0 for r in rs])
    headline: dict[str, float] = {"accuracy": overall.accuracy}
    if kind == "hrbench":
        cycles = {q.id: str(q.metadata.get("cycle", "0")) for q in questions}
        headline.update(cycle_accuracy(rows, cycles))
    elif kind == "pope":
        headline.update({f"pope_{k}": v for k, v in pope_metrics(rows).items()})
        for s in splits:
            s.extra = pope_metrics(by_split[s.name])
    elif kind == "grounding":
        headline["mean_iou"] = _mean([r.score or 0.0 for r in rows])
    return EvalSummary(
        model=model,
        dataset=dataset,
        kind=kind,
        overall=overall,
        splits=splits,
        by_mode=by_mode,
        headline=headline,
    )


# ---------------------------------------------------------------- running


def _legacy_questions_hash(questions: list[Question]) -> str:
    """What run.json files written before the shared digest stored as ``questions_sha256`` (the
    records without their initial image); read only so those runs still resume."""
    h = hashlib.sha256()
    for q in questions:
        h.update(q.model_dump_json(exclude={"initial_image"}).encode())
    return h.hexdigest()


def _check_resume(run_dir: Path, cfg: AutoToolEvalConfig, questions: list[Question]) -> None:
    path = run_dir / "run.json"
    if not path.exists():
        return
    saved = json.loads(path.read_text(encoding="utf-8"))
    new = cfg.model_dump(mode="json")
    if saved.get("questions_sha256") == _legacy_questions_hash(questions):
        saved["questions_sha256"] = new["questions_sha256"]  # an older run.json, same questions
    diffs = [
        f"{k}: saved {saved.get(k)!r}, now {new.get(k)!r}"
        for k in RESULT_SETTINGS
        if saved.get(k) != new.get(k)
    ]
    if diffs:
        raise ConfigError(
            f"{run_dir} holds a run with other settings ({'; '.join(diffs)}); "
            "use another --out directory to evaluate these settings"
        )


async def run_eval(
    cfg: AutoToolEvalConfig,
    out_dir: str | Path,
    model: Model,
    *,
    on_episode: Callable[[EpisodeResult], None] | None = None,
) -> EvalSummary:
    """Run (or resume) the evaluation described by ``cfg`` with ``model``; return the summary."""
    from eviseek.envs.base import as_async
    from eviseek.envs.image.env import DEFAULT_MAX_PIXELS, ImageZoomEnv
    from eviseek.envs.image.zoom import ZoomSettings
    from eviseek.eval.store import ResultsStore, episode_dir

    run_dir = Path(out_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    kind: DatasetKind
    kind, questions = load_benchmark(
        cfg.dataset,
        run_dir / "source_images",
        seed=cfg.seed,
        limit=cfg.limit,
        shuffle_vstar=cfg.shuffle_vstar,
    )
    if not questions:
        raise ConfigError(f"dataset {cfg.dataset!r} has no questions")
    # Images stay where the loader put them (source_images/); the file records their paths.
    cfg = cfg.model_copy(update={"questions_sha256": questions_digest(questions, image_dir=None)})
    _check_resume(run_dir, cfg, questions)
    tmp = run_dir / "run.json.tmp"
    tmp.write_text(cfg.model_dump_json(indent=1), encoding="utf-8")
    tmp.replace(run_dir / "run.json")
    write_questions(run_dir, questions, image_dir=None)

    ac = dict(cfg.agent_config)
    max_pixels = ac.pop("max_pixels", DEFAULT_MAX_PIXELS)
    gen = GenerateConfig.model_validate(ac.pop("generate", {"temperature": 0.0, "max_tokens": 2048}))
    force_mode: Mode | None = ac.pop("force_mode", None)
    agent = AutoToolAgent(generate=gen, force_mode=force_mode, **ac)

    store = ResultsStore(run_dir)
    try:
        done = {q for a, q in store.done_keys() if a == AGENT}
        failed = {q for a, q in store.failed_keys() if a == AGENT}
        pending = [q for q in questions if q.id not in done or q.id in failed]
        sem = asyncio.Semaphore(cfg.concurrency)

        async def one(q: Question) -> None:
            async with sem:
                # A fresh, path-backed image per episode: pixels are loaded now and dropped after.
                img = q.initial_image
                assert img is not None
                local = q.model_copy(
                    update={"initial_image": Image(path=img.path, width=img.width, height=img.height)}
                )
                env = ImageZoomEnv(
                    max_pixels=max_pixels,
                    max_steps=agent.max_turns * agent.max_calls_per_turn,
                    zoom_settings=ZoomSettings(max_output_pixels=max_pixels),
                )
                try:
                    traj = await agent.run(as_async(env), local, model, seed=cfg.seed)
                    result = score_episode(local, traj)
                    await asyncio.to_thread(traj.save, episode_dir(run_dir, AGENT, q.id))
                except ConfigError:
                    raise  # a wrong setting (model id, key, URL) fails every episode: stop now
                except Exception as exc:  # an infrastructure failure: recorded, retried on resume
                    result = EpisodeResult(
                        question_id=q.id,
                        agent=AGENT,
                        model=model.name,
                        family=q.family,
                        subcategory=q.subcategory,
                        ground_truth=q.ground_truth,
                        correct=False,
                        score=0.0,
                        error=f"{type(exc).__name__}: {exc}",
                    )
                finally:
                    env.close()
                store.add(result, replace=q.id in failed)
                if on_episode is not None:
                    on_episode(result)

        await asyncio.gather(*(one(q) for q in pending))
        wanted = {q.id for q in questions}
        rows = [r for r in store.results(AGENT) if r.question_id in wanted]
    finally:
        store.close()
    summary = summarize(rows, questions, model=cfg.model, dataset=cfg.dataset, kind=kind)
    (run_dir / SUMMARY_FILE).write_text(summary.model_dump_json(indent=1), encoding="utf-8")
    return summary
