"""Building and running a TRL GRPO job: model, data, warm-up, rewards, trainer, summary."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek._lazy import require
from eviseek.errors import ConfigError
from eviseek.train.amb import AMBController
from eviseek.train.autotool_config import AutoToolTrainConfig
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame
from eviseek.train.mode_tokens import add_mode_tokens
from eviseek.train.rewards import build_reward_functions
from eviseek.train.trl_autotool.callbacks import make_amb_callback, make_mode_cost_callback, mode_cost_summary
from eviseek.train.trl_autotool.dataset import load_rows, trl_dataset, warmup_rows
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment
from eviseek.train.trl_autotool.reward_wrappers import FullRolloutReward
from eviseek.train.trl_autotool.warmup import WarmupReport, run_warmup


class TrainSummary(BaseModel):
    """What a run did: written to ``OUTPUT_DIR/summary.json``."""

    output_dir: str
    model: str
    steps: int
    train_seconds: float
    seconds_per_step: float
    warmup: WarmupReport
    log_history: list[dict[str, Any]] = Field(default_factory=list)
    amb_history: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: int = 0
    """Zoom calls the tool executed (valid or not) during GRPO."""
    tool_crops_returned: int = 0
    """Calls that returned a crop."""
    crops_in_completions: int = 0
    """Tool replies with an image found in the completions the rewards scored (TRL drops a
    tool reply whose tokens would exceed ``max_completion_length``)."""
    saved_model: str | None = None
    mode_cost: dict[str, Any] = Field(default_factory=dict)
    """Wall time and tokens of the GRPO steps, split by the mode each rollout chose
    (:func:`~eviseek.train.trl_autotool.callbacks.mode_cost_summary`; per step in
    ``mode_cost.jsonl``)."""


class AutoToolRun:
    """A built run: the trainer and everything around it (returned by :func:`build_trainer`)."""

    def __init__(
        self,
        cfg: AutoToolTrainConfig,
        trainer: Any,
        model_path: str,
        amb: AMBController,
        warmup: WarmupReport,
        environments: list[ZoomToolEnvironment],
    ) -> None:
        self.cfg = cfg
        self.trainer = trainer
        self.model_path = model_path
        self.amb = amb
        self.warmup = warmup
        self.environments = environments
        self.mode_cost: Any = None
        """The run's :class:`~eviseek.train.trl_autotool.callbacks.ModeCostCallback`."""

    def train(self, *, save: bool = True) -> TrainSummary:
        """Run GRPO to ``grpo.max_steps`` and write the summary (and the model when ``save``)."""
        out = Path(self.cfg.output_dir)
        start = time.perf_counter()
        self.trainer.train()
        seconds = time.perf_counter() - start
        state = self.trainer.state
        saved = None
        if save:
            self.trainer.save_model(str(out / "final"))
            saved = str(out / "final")
        steps = int(state.global_step)
        envs = self._all_envs()
        monitor = self.trainer.reward_funcs[0]
        summary = TrainSummary(
            output_dir=str(out),
            model=self.model_path,
            steps=steps,
            train_seconds=seconds,
            seconds_per_step=seconds / max(1, steps),
            warmup=self.warmup,
            log_history=[_jsonable(x) for x in state.log_history],
            amb_history=[s.model_dump() for s in self.amb.history],
            tool_calls=sum(e.total_calls for e in envs),
            tool_crops_returned=sum(e.total_crops for e in envs),
            crops_in_completions=getattr(monitor, "crops_in_completions", 0),
            saved_model=saved,
            mode_cost=mode_cost_summary(self.mode_cost.steps) if self.mode_cost is not None else {},
        )
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")
        return summary

    def _all_envs(self) -> list[ZoomToolEnvironment]:
        pool = getattr(self.trainer, "_environment_pool", None) or {}
        envs = [e for instances in pool.values() for e in instances]
        return envs or self.environments


def _write_prompts(path: Path, rows: Sequence[TrainingRow], dataset: Any) -> None:
    """The exact prompt of every training row, as TRL receives it (images as placeholders; the
    chat template adds the tool list when the tool is offered)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for row, rec in zip(rows, dataset, strict=True):
            fh.write(json.dumps({"id": row.id, "prompt": rec["prompt"]}) + "\n")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return str(value)


def load_model_and_processor(cfg: AutoToolTrainConfig) -> tuple[Any, Any, str]:
    """``(model, processor, model_path)`` for the config (builds the tiny model when asked)."""
    require("torch", "train", "AutoTool training")
    transformers = require("transformers", "train", "AutoTool training")
    from eviseek.models.hf_local import load_vlm_processor

    if cfg.tiny_model is not None:
        from eviseek.train.tiny_model import build_tiny_vlm

        path = str(build_tiny_vlm(config=cfg.tiny_model))
    else:
        assert cfg.model is not None
        path = cfg.model
    processor, _ = load_vlm_processor(path, max_pixels=cfg.max_image_pixels)
    processor.tokenizer.padding_side = "left"
    dtype = "bfloat16" if cfg.grpo.bf16 else "float32"
    try:
        model = transformers.AutoModelForImageTextToText.from_pretrained(path, dtype=dtype)
    except OSError as exc:
        raise ConfigError(
            f"cannot load model {path!r}: {exc}. Use a local directory or a hub id already downloaded "
            "(huggingface-cli download <id>)"
        ) from exc
    add_mode_tokens(model, processor)
    return model, processor, path


# Long because it is the one place where a config becomes a trainer, in the order the parts depend
# on each other (model, data, tool env, warm-up, rewards, generation settings, TRL's config, the
# trainer); about 30 lines are the flat mapping of our GRPO settings onto TRL's GRPOConfig.
def build_trainer(cfg: AutoToolTrainConfig, *, rows: Sequence[TrainingRow] | None = None) -> AutoToolRun:
    """Load the model, prepare data, run the warm-up, and build TRL's ``GRPOTrainer``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    trl = require("trl", "train", "AutoTool GRPO training")
    if cfg.torch_threads is not None:
        require("torch", "train", "AutoTool training").set_num_threads(cfg.torch_threads)
    model, processor, model_path = load_model_and_processor(cfg)
    coords = cfg.zoom.coordinates
    frame = ImageFrame.from_processor(processor) if coords == "shown" else ImageFrame()
    train_rows = list(rows) if rows is not None else load_rows(cfg)
    if not train_rows:
        raise ConfigError("the training data has no rows")
    compact = cfg.prompt_style == "compact"
    dataset = trl_dataset(train_rows, coords, frame, compact=compact, offer_tool=cfg.zoom.enabled)
    _write_prompts(Path(cfg.output_dir) / "prompts.jsonl", train_rows, dataset)
    factory = functools.partial(ZoomToolEnvironment, coords, frame, cfg.zoom.settings)
    probe = factory()

    warm = WarmupReport()
    if cfg.warmup.steps:
        warm = run_warmup(
            model,
            processor,
            warmup_rows(cfg, train_rows),
            factory(),
            coords,
            frame,
            cfg.warmup,
            [probe.image_zoom_in_tool] if cfg.zoom.enabled else None,
            seed=cfg.grpo.seed,
            compact=compact,
        )

    amb = AMBController(cfg.amb)
    funcs, weights = build_reward_functions(cfg.rewards, amb=amb)
    tokenizer = processor.tokenizer
    # The first wrapper also counts crops and logs the rollouts' mode and call statistics.
    reward_funcs = [FullRolloutReward(f, tokenizer, monitor=(i == 0)) for i, f in enumerate(funcs)]

    g = cfg.grpo
    extra = dict(g.extra)
    if g.force_mode is not None:
        # The other mode's token can never be sampled (TRL's own suppression of the image token
        # is kept): every rollout that writes a mode token writes the forced one.
        other = "<tool_off>" if g.force_mode == "tool_on" else "<tool_on>"
        suppress = [tokenizer.convert_tokens_to_ids(other)]
        image_token = getattr(getattr(model, "config", None), "image_token_id", None)
        if image_token is not None:
            suppress.append(image_token)
        kwargs = dict(extra.get("generation_kwargs") or {})
        kwargs["suppress_tokens"] = sorted(set(suppress) | set(kwargs.get("suppress_tokens") or []))
        extra["generation_kwargs"] = kwargs
    if not {"gradient_checkpointing", "activation_checkpointing"} & extra.keys():
        # Always passed: TRL's GRPOConfig turns checkpointing on unless told otherwise, and our
        # default is off (it recomputes every layer's forward in the backward pass, which only pays
        # when activations do not fit). transformers 5 renamed the argument; the old name warns.
        names = {f.name for f in dataclasses.fields(trl.GRPOConfig)}
        name = "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"
        extra[name] = g.gradient_checkpointing
    args = trl.GRPOConfig(
        output_dir=str(cfg.output_dir),
        max_steps=g.max_steps,
        learning_rate=g.learning_rate,
        num_generations=g.num_generations,
        per_device_train_batch_size=g.per_device_train_batch_size,
        gradient_accumulation_steps=g.gradient_accumulation_steps,
        steps_per_generation=g.steps_per_generation,
        num_iterations=g.num_iterations,
        max_completion_length=g.max_completion_length,
        max_tool_calling_iterations=g.max_tool_calling_iterations,
        temperature=g.temperature,
        top_p=g.top_p,
        beta=g.beta,
        epsilon=g.epsilon,
        loss_type=g.loss_type,
        reward_weights=weights,
        logging_steps=g.logging_steps,
        save_strategy="steps" if g.save_steps else "no",
        save_steps=g.save_steps or 500,
        seed=g.seed,
        bf16=g.bf16,
        use_cpu=g.use_cpu,
        use_vllm=g.use_vllm,
        vllm_mode=g.vllm_mode,
        vllm_gpu_memory_utilization=g.vllm_gpu_memory_utilization,
        report_to=g.report_to or "none",
        log_completions=g.log_completions,
        disable_tqdm=True,
        **extra,
    )
    callback = make_amb_callback(amb, Path(cfg.output_dir) / "amb.jsonl")
    cost = make_mode_cost_callback(reward_funcs[0], Path(cfg.output_dir) / "mode_cost.jsonl")
    trainer = grpo_trainer_class()(
        model=model,
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=dataset,
        processing_class=processor,
        environment_factory=factory if cfg.zoom.enabled else None,
        callbacks=[callback, cost],
    )
    run = AutoToolRun(cfg, trainer, model_path, amb, warm, [probe])
    run.mode_cost = cost
    return run


def _image_fields_as_tensors(fields: dict[str, Any]) -> dict[str, Any]:
    """``pixel_values`` / ``image_grid_thw`` as tensors when TRL hands them over as lists of rows."""
    torch = require("torch", "train", "AutoTool training")
    import numpy as np

    out = dict(fields)
    for key in ("pixel_values", "image_grid_thw"):
        value = out.get(key)
        if isinstance(value, list) and value:
            out[key] = torch.as_tensor(np.asarray([np.asarray(v) for v in value]))
    return out


def grpo_trainer_class() -> Any:
    """TRL's ``GRPOTrainer``, with a guard for a bug of TRL 1.16's tool loop.

    With ``environment_factory``, TRL tokenises prompts one by one and keeps the image fields as
    Python lists; when a batch has tool calls but none of them returned an image (every zoom
    box was rejected), its tool loop then calls ``.prod()`` on that list and training stops
    with ``AttributeError``. The subclass converts the fields to tensors first; nothing else
    changes. Seen with trl 1.16.0 on the learning run, where early rollouts write bad boxes.
    """
    base: Any = require("trl", "train", "AutoTool GRPO training").GRPOTrainer

    class AutoToolGRPOTrainer(base):  # type: ignore[misc,valid-type]
        def _tool_call_loop(self, *args: Any) -> Any:
            *head, multimodal_fields = args
            if isinstance(multimodal_fields, dict):
                multimodal_fields = _image_fields_as_tensors(multimodal_fields)
            return super()._tool_call_loop(*head, multimodal_fields)

    return AutoToolGRPOTrainer


def train_autotool(cfg: AutoToolTrainConfig, *, save: bool = True) -> TrainSummary:
    """Build and run a training job from a validated config."""
    return build_trainer(cfg).train(save=save)
