"""The AutoTool learning run: one warm-up, then GRPO variants from the same warmed model.

Stage 1 (:func:`warm_start`) fits the tiny model on synthetic traces of both modes and saves
it. Stage 2 (:func:`run_variant`) loads that model and runs GRPO through
:func:`eviseek.train.trl_autotool.build_trainer`, the code path of ``eviseek train autotool``,
with one preset of :mod:`eviseek.train.presets` per variant, then evaluates the result on
held-out rows (:func:`evaluate_saved`). Every variant writes ``result.json``
(:class:`VariantResult`); :mod:`autotool_learning.report` turns them into the report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek._lazy import require
from eviseek.train.autotool_config import AutoToolTrainConfig, load_config
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame
from eviseek.train.policy_eval import HeldOutResult, evaluate_policy
from eviseek.train.trl_autotool.dataset import warmup_rows
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment
from eviseek.train.trl_autotool.run import build_trainer, load_model_and_processor
from eviseek.train.trl_autotool.warmup import WarmupReport, run_warmup

STEP_KEYS = (
    "reward",
    "rewards/accuracy/mean",
    "rewards/format/mean",
    "rewards/tool/mean",
    "autotool/accuracy",
    "autotool/accuracy_need_zoom",
    "autotool/accuracy_no_need",
    "autotool/tool_on_share",
    "autotool/tool_on_share_need_zoom",
    "autotool/tool_on_share_no_need",
    "autotool/valid_call_rate",
    "autotool/no_mode_share",
    "amb/lambda_on",
    "amb/lambda_off",
    "amb/ratio_on",
    "amb/released",
    "completions/mean_length",
)
"""The per-step series kept from TRL's log history (absent keys are skipped)."""


class Evaluation(BaseModel):
    """Held-out results of one model: free mode choice, and each mode forced."""

    free: HeldOutResult
    forced_on: HeldOutResult | None = None
    forced_off: HeldOutResult | None = None
    seconds: float = 0.0


class VariantResult(BaseModel):
    """What one GRPO variant did: per-step training series and the held-out evaluation."""

    name: str
    preset: str | None
    steps: int
    train_seconds: float
    train_cpu_seconds: float | None = None
    """CPU time of the GRPO process during training (one torch thread: about the wall time the run
    would take on a quiet core; the machine it ran on was shared)."""
    eval_seconds: float | None = None
    series: dict[str, list[float | None]] = Field(default_factory=dict)
    """Each of :data:`STEP_KEYS` per step (``None`` where a step did not log it)."""
    heldout: Evaluation | None = None
    tool_calls: int = 0
    crops_in_completions: int = 0
    mode_cost: dict[str, Any] = Field(default_factory=dict)
    """GRPO wall time and tokens split by the mode each rollout chose (``TrainSummary.mode_cost``)."""


def _frame(cfg: AutoToolTrainConfig, processor: Any) -> ImageFrame:
    return ImageFrame.from_processor(processor) if cfg.zoom.coordinates == "shown" else ImageFrame()


def warm_start(
    cfg: AutoToolTrainConfig,
    out: Path,
    rows: list[TrainingRow] | None = None,
    on_step: Callable[[Any, Any, int], None] | None = None,
) -> WarmupReport:
    """Stage 1: build the model, fit it on the warm-up traces and save it (with its processor) to ``out``.

    ``on_step(model, processor, steps_done)`` runs after every warm-up step (for probes)."""
    if cfg.torch_threads is not None:
        require("torch", "train", "AutoTool training").set_num_threads(cfg.torch_threads)
    model, processor, _ = load_model_and_processor(cfg)
    frame = _frame(cfg, processor)
    train_rows = rows if rows is not None else warmup_rows(cfg)
    env = ZoomToolEnvironment(cfg.zoom.coordinates, frame, cfg.zoom.settings)
    report = run_warmup(
        model,
        processor,
        train_rows,
        env,
        cfg.zoom.coordinates,
        frame,
        cfg.warmup,
        [env.image_zoom_in_tool],
        seed=cfg.grpo.seed,
        compact=cfg.prompt_style == "compact",
        on_step=None if on_step is None else (lambda k: on_step(model, processor, k)),
    )
    out.mkdir(parents=True, exist_ok=True)
    write_prompts(out / "prompts.jsonl", cfg, processor, train_rows)
    model.save_pretrained(str(out))
    processor.save_pretrained(str(out))
    (out / "warmup.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return report


def add_mode_prior(cfg: AutoToolTrainConfig, warm: Path) -> WarmupReport | None:
    """Run ``warmup.mode_prior`` on a warm-up saved without it (one reused with ``--warm-from``, or
    one started before the phase was configured) and save the model back to ``warm``; its report
    joins ``warm/warmup.json``. A held-out evaluation made before is kept as
    ``heldout_before_mode_prior.json`` and redone, so the warm-up's numbers are those of the model
    GRPO starts from. Returns the updated report, or ``None`` when there was nothing to do."""
    import json

    from eviseek.train.trl_autotool.warmup import mode_prior_phase

    record = warm / "warmup.json"
    report = WarmupReport.model_validate(json.loads(record.read_text(encoding="utf-8")))
    if cfg.warmup.mode_prior is None or report.mode_prior is not None:
        return None
    if cfg.torch_threads is not None:
        require("torch", "train", "AutoTool training").set_num_threads(cfg.torch_threads)
    model, processor, _ = load_model_and_processor(
        cfg.model_copy(update={"tiny_model": None, "model": str(warm)})
    )
    frame = _frame(cfg, processor)
    env = ZoomToolEnvironment(cfg.zoom.coordinates, frame, cfg.zoom.settings)
    # The seed run_warmup gives the phase, so a reused warm-up gets the draws a fresh one would.
    report.mode_prior = mode_prior_phase(
        model,
        processor,
        warmup_rows(cfg),
        env,
        cfg.zoom.coordinates,
        frame,
        cfg.warmup.mode_prior,
        [env.image_zoom_in_tool],
        seed=cfg.grpo.seed + 2,
        compact=cfg.prompt_style == "compact",
    )
    model.save_pretrained(str(warm))
    processor.save_pretrained(str(warm))
    record.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    held = warm / "heldout.json"
    if held.is_file():
        held.replace(warm / "heldout_before_mode_prior.json")
    return report


def write_prompts(path: Path, cfg: AutoToolTrainConfig, processor: Any, rows: list[TrainingRow]) -> None:
    """The exact prompt (system and user turn, images as placeholders) of each row, one JSON line
    per row: what the warm-up and the held-out evaluation asked (GRPO's are written by
    ``build_trainer``)."""
    import json

    from eviseek.train.trl_autotool.dataset import prompt_for

    frame = _frame(cfg, processor)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            prompt = prompt_for(
                row,
                cfg.zoom.coordinates,
                frame,
                compact=cfg.prompt_style == "compact",
                offer_tool=cfg.zoom.enabled,
            )
            fh.write(json.dumps({"id": row.id, "prompt": prompt}) + "\n")


def variant_config(
    config_path: Path,
    warm_dir: Path,
    out: Path,
    *,
    preset: str | None,
    overrides: dict[str, Any] | None = None,
) -> AutoToolTrainConfig:
    """The config of one GRPO variant: the learning-run file, a preset, starting from the warmed model."""
    base = {"tiny_model": None, "model": str(warm_dir), "warmup.steps": 0, "output_dir": str(out)}
    # The variant starts from the warmed checkpoint, so the tiny model's init settings (a seed's
    # ``tiny_model.seed``) no longer apply; left in, they would build ``tiny_model`` again beside
    # ``model``, which the config refuses.
    kept = {k: v for k, v in (overrides or {}).items() if not k.startswith("tiny_model.")}
    return load_config(config_path, {**base, **kept}, preset=preset)


def evaluate_saved(
    cfg: AutoToolTrainConfig, model: Any, processor: Any, rows: list[TrainingRow], *, forced: bool = True
) -> Evaluation:
    """Held-out evaluation of a model: free mode choice, plus each mode forced when ``forced``."""
    start = time.perf_counter()
    frame = _frame(cfg, processor)
    env = ZoomToolEnvironment(cfg.zoom.coordinates, frame, cfg.zoom.settings)
    kw: dict[str, Any] = {
        "coordinates": cfg.zoom.coordinates,
        "frame": frame,
        "env": env,
        "tools": cfg.zoom.enabled,
        "max_new_tokens": 64,
        "max_turns": 1 + cfg.grpo.max_tool_calling_iterations,
        "compact": cfg.prompt_style == "compact",
    }
    # A preset that pins the mode in training (always_tool, text_only) is scored in that mode.
    ev = Evaluation(free=evaluate_policy(model, processor, rows, force_mode=cfg.grpo.force_mode, **kw))
    if forced:
        if cfg.zoom.enabled:
            ev.forced_on = evaluate_policy(model, processor, rows, force_mode="tool_on", **kw)
        ev.forced_off = evaluate_policy(model, processor, rows, force_mode="tool_off", **kw)
    ev.seconds = time.perf_counter() - start
    return ev


def run_variant(
    name: str,
    cfg: AutoToolTrainConfig,
    heldout: list[TrainingRow],
    *,
    preset: str | None = None,
    forced: bool = False,
) -> VariantResult:
    """Stage 2 for one variant: GRPO from the warmed model, then the held-out evaluation.

    Writes ``result.json`` to the variant's ``output_dir`` (the trained weights are not kept).
    """
    if cfg.torch_threads is not None:
        require("torch", "train", "AutoTool training").set_num_threads(cfg.torch_threads)
    run = build_trainer(cfg)
    cpu = time.process_time()
    summary = run.train(save=False)
    cpu = time.process_time() - cpu
    steps = [h for h in summary.log_history if "loss" in h]
    series: dict[str, list[float | None]] = {}
    for key in STEP_KEYS:
        values = [h.get(key) for h in steps]
        if any(v is not None for v in values):
            series[key] = [float(v) if isinstance(v, (int, float)) else None for v in values]
    result = VariantResult(
        name=name,
        preset=preset,
        steps=summary.steps,
        train_seconds=summary.train_seconds,
        train_cpu_seconds=cpu,
        series=series,
        tool_calls=summary.tool_calls,
        crops_in_completions=summary.crops_in_completions,
        mode_cost=summary.mode_cost,
    )
    result.heldout = evaluate_saved(
        cfg, run.trainer.model, run.trainer.processing_class, heldout, forced=forced
    )
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
    return result
