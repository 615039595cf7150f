"""AutoTool GRPO training on one machine with TRL (``eviseek train autotool --config FILE``).

The pieces, in the order :func:`train_autotool` uses them:

1. **Model and processor**: a checkpoint (``model:``) or a tiny random Qwen3-VL built offline
   (``tiny_model:``). The chat template must be one TRL recognises (Qwen3-VL's is), otherwise
   TRL does not parse tool calls.
2. **Data**: :class:`~eviseek.train.data.TrainingRow` rows turned into TRL's conversational
   VLM format (``prompt`` + ``images`` + reward columns). The prompt states the frame the zoom
   boxes refer to.
3. **The zoom tool**: :class:`ZoomToolEnvironment`, passed as TRL's ``environment_factory``;
   ``reset`` receives the row (and so the original image), its public method
   ``image_zoom_in_tool`` is the tool. It returns the crop as an image content block, which TRL
   appends to the completion and feeds to both the next generation turn and the training
   forward pass. A bad box returns an error text to the model (never raises).
4. **Rewards**: accuracy, format and the mode-specific tool reward (MSPO) from
   :mod:`eviseek.train.rewards`, with AMB scaling the tool reward per mode from the batch's
   mode ratio at ``trainer_state.global_step``. TRL's parsed messages drop text before
   ``<think>`` in some turns (the mode token among it), so the rewards read each rollout
   rebuilt from its token ids instead (:func:`rollout_messages`).
5. **Optional warm-up**: a short supervised overfit on the rows' ideal replies (zoom on the
   target then answer, or answer directly) so a random model emits well-formed calls; real
   checkpoints skip it.
6. **GRPO** with TRL's ``GRPOTrainer``; :class:`AMBLogCallback` writes the ratio and both
   lambdas of every step to ``amb.jsonl`` (they also reach TRL's logs via ``log_metric``).

Everything heavy is imported inside functions (extra ``train``).
"""

from __future__ import annotations

import functools
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek._lazy import require
from eviseek.autotool.prompts import ZOOM_ERROR_PREFIX, system_prompt, user_prompt
from eviseek.autotool.protocol import ZOOM_TOOL_NAME
from eviseek.envs.image.zoom import ZoomError, ZoomSettings, zoom
from eviseek.errors import ConfigError
from eviseek.train.amb import AMBController
from eviseek.train.autotool_config import AutoToolTrainConfig, Coordinates
from eviseek.train.data import TrainingRow
from eviseek.train.frames import ImageFrame, box_frame
from eviseek.train.rewards import AccuracyReward, FormatReward, ToolReward
from eviseek.train.rollouts import IM_END, IM_START, crop_turns, rollout_messages

# ------------------------------------------------------------------------------------------------
# The zoom tool as a TRL environment.


class ZoomToolEnvironment:
    """One rollout's image and its zoom tool, for TRL's ``environment_factory``.

    TRL builds a pool of these, calls :meth:`reset` with each dataset row before generation,
    and exposes every public method except ``reset`` as a tool whose JSON schema comes from
    the type hints and docstring. :attr:`calls` records what happened, for tests and debugging.
    """

    def __init__(
        self,
        coordinates: Coordinates = "shown",
        frame: ImageFrame | None = None,
        settings: ZoomSettings | None = None,
    ) -> None:
        self.coordinates: Coordinates = coordinates
        self.frame = frame or ImageFrame()
        self.settings = settings or ZoomSettings()
        self.image: Any = None
        self.calls: list[dict[str, Any]] = []
        """This rollout's calls (cleared by :meth:`reset`)."""
        self.total_calls = 0
        self.total_crops = 0
        """Calls and returned crops over the instance's life (TRL reuses instances)."""

    def reset(self, **row: Any) -> None:
        """Take the row's first image as the one to zoom into (TRL passes every column)."""
        images = row.get("images") or ([row["image"]] if row.get("image") is not None else [])
        self.image = images[0].convert("RGB") if images else None
        self.calls = []
        return None

    def image_zoom_in_tool(self, bbox_2d: list[float], label: str = "") -> list[dict[str, Any]] | str:
        """Crop the image to a region and return the crop at full resolution.

        Args:
            bbox_2d: The region as [x1, y1, x2, y2] in the coordinates stated in the question: (x1, y1) is the top-left corner and (x2, y2) the bottom-right corner.
            label: Optional name of what the region should contain.

        Returns:
            The cropped image with a line describing the crop, or an error message.
        """  # noqa: E501 - TRL reads each argument's description from a single docstring line
        if self.image is None:
            return f"{ZOOM_ERROR_PREFIX} this question has no image to zoom into; answer directly."
        shown = box_frame(self.coordinates, self.frame, self.image.width, self.image.height)
        result = zoom(self.image, bbox_2d, shown, label=label or None, settings=self.settings)
        self.total_calls += 1
        if isinstance(result, ZoomError):
            self.calls.append({"bbox_2d": bbox_2d, "ok": False, "error": result.message})
            return f"{ZOOM_ERROR_PREFIX} {result.message}"
        self.total_crops += 1
        self.calls.append({"bbox_2d": bbox_2d, "ok": True, "box_original": list(result.box_original)})
        x1, y1, x2, y2 = result.box_shown
        text = f"Zoomed into [{x1:g}, {y1:g}, {x2:g}, {y2:g}]."
        return [{"type": "image", "image": result.crop.to_pil()}, {"type": "text", "text": text}]


# ------------------------------------------------------------------------------------------------
# Data.


def prompt_for(row: TrainingRow, coordinates: Coordinates, frame: ImageFrame) -> list[dict[str, Any]]:
    """TRL conversational prompt of a row: system turn, then the images and the question.

    The tool list is not in the system text: TRL's chat template renders the tools itself.
    """
    size: tuple[int, int] | None = None
    fmt = row.answer_format()
    if row.images:
        pil = row.pil_images()[0]
        if coordinates == "normalized_1000":
            fmt += " Write zoom boxes on a 0..1000 grid over the image."
        else:
            size = box_frame(coordinates, frame, pil.width, pil.height)
    content: list[dict[str, Any]] = [{"type": "image"} for _ in row.images]
    content.append({"type": "text", "text": user_prompt(row.question, answer_format=fmt, image_size=size)})
    return [
        # Both turns use content lists: Arrow cannot store a column that mixes strings and lists.
        {"role": "system", "content": [{"type": "text", "text": system_prompt(tools=False)}]},
        {"role": "user", "content": content},
    ]


def trl_dataset(rows: Sequence[TrainingRow], coordinates: Coordinates, frame: ImageFrame) -> Any:
    """A ``datasets.Dataset`` in TRL's VLM format with the columns the rewards read."""
    datasets = require("datasets", "train", "AutoTool training data")
    records = []
    for row in rows:
        rec = row.to_trl(tools_in_system=False)
        rec["prompt"] = prompt_for(row, coordinates, frame)
        records.append(rec)
    return datasets.Dataset.from_list(records)


def load_rows(cfg: AutoToolTrainConfig) -> list[TrainingRow]:
    """The training rows the config names (synthetic or from a file)."""
    from eviseek.train.data import SyntheticConfig, load_saved_rows, load_training_rows, synthetic_rows

    if cfg.data.synthetic is not None:
        s = cfg.data.synthetic
        return synthetic_rows(s.n, seed=s.seed, config=SyntheticConfig(**s.model_dump(exclude={"n", "seed"})))
    f = cfg.data.file
    assert f is not None
    if not f.path.exists():
        raise ConfigError(f"data.file.path {f.path} does not exist")
    if f.layout == "saved":
        rows = load_saved_rows(f.path)
        return rows[: f.limit] if f.limit else rows
    return load_training_rows(f.path, f.layout, limit=f.limit)


# ------------------------------------------------------------------------------------------------
# Reading rollouts back for the rewards.


class FullRolloutReward:
    """Wrap a reward so it reads rollouts rebuilt from their token ids (see :func:`rollout_messages`).

    Picklable; keeps the wrapped reward's ``__name__`` so TRL logs it under the same name.
    With ``monitor=True`` it also counts, per batch, the tool replies that carried an image
    into the completion (logged as ``autotool/crops_in_completion``) and keeps running totals:
    the evidence that crops reach the policy's input, not only the tool.
    """

    def __init__(
        self, reward: Callable[..., list[float | None]], tokenizer: Any, *, monitor: bool = False
    ) -> None:
        self.reward = reward
        self.tokenizer = tokenizer
        self.monitor = monitor
        self.rollouts_seen = 0
        self.crops_in_completions = 0
        self.__name__ = getattr(reward, "__name__", type(reward).__name__)

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        ids = kwargs.get("completion_ids")
        if ids is None or len(ids) != len(completions):
            return self.reward(completions=completions, **kwargs)
        rebuilt = [rollout_messages(self.tokenizer.decode(list(i), skip_special_tokens=False)) for i in ids]
        if self.monitor:
            crops = sum(crop_turns(m) for m in rebuilt)
            self.rollouts_seen += len(rebuilt)
            self.crops_in_completions += crops
            log_metric = kwargs.get("log_metric")
            if callable(log_metric):
                log_metric("autotool/crops_in_completion", crops / max(1, len(rebuilt)))
        return self.reward(completions=rebuilt, **kwargs)


# ------------------------------------------------------------------------------------------------
# Warm-up: a short supervised overfit on ideal replies.


class WarmupReport(BaseModel):
    """Losses of the supervised warm-up (first and last step, and every step)."""

    steps: int = 0
    losses: list[float] = Field(default_factory=list)
    seconds: float = 0.0


def ideal_conversation(
    row: TrainingRow,
    env: ZoomToolEnvironment,
    coordinates: Coordinates,
    frame: ImageFrame,
) -> list[dict[str, Any]]:
    """The reply the protocol wants for a row, as a full chat (prompt included, images inline).

    Rows that need zooming: ``<tool_on>``, a zoom call on the target box (with a margin), the
    crop the real tool returns, then the answer. Other rows: ``<tool_off>`` and the answer.
    """
    images = row.pil_images()
    prompt = prompt_for(row, coordinates, frame)
    user_content = []
    it = iter(images)
    for part in prompt[1]["content"]:
        user_content.append({"type": "image", "image": next(it)} if part["type"] == "image" else part)
    convo: list[dict[str, Any]] = [prompt[0], {"role": "user", "content": user_content}]
    answer = _answer_text(row)
    if row.needs_zoom and row.target_boxes and images:
        img = images[0]
        env.reset(images=images)
        fw, fh = box_frame(coordinates, frame, img.width, img.height)
        x1, y1, x2, y2 = row.target_boxes[0]
        sx, sy = fw / img.width, fh / img.height
        pad_x, pad_y = max(4.0, (x2 - x1) * 0.5), max(4.0, (y2 - y1) * 0.5)
        box = [
            max(0, round((x1 - pad_x) * sx)),
            max(0, round((y1 - pad_y) * sy)),
            min(fw, round((x2 + pad_x) * sx)),
            min(fh, round((y2 + pad_y) * sy)),
        ]
        call = json.dumps({"name": ZOOM_TOOL_NAME, "arguments": {"bbox_2d": box}})
        think = "<think>The detail is small; zoom in.</think>"
        result = env.image_zoom_in_tool(box)
        convo.append(
            {
                "role": "assistant",
                "content": f"<tool_on>{think}<tool_call>\n{call}\n</tool_call>",
            }
        )
        convo.append({"role": "tool", "name": ZOOM_TOOL_NAME, "content": result})
        convo.append(
            {"role": "assistant", "content": f"<think>The crop shows it.</think><answer>{answer}</answer>"}
        )
    else:
        convo.append(
            {
                "role": "assistant",
                "content": f"<tool_off><think>The whole view is enough.</think><answer>{answer}</answer>",
            }
        )
    return convo


def _answer_text(row: TrainingRow) -> str:
    """The answer as the prompt asks for it: the option letter for option questions."""
    if row.options and row.ground_truth in row.options:
        return chr(65 + row.options.index(row.ground_truth))
    return row.ground_truth


def _assistant_mask(ids: list[int], header: list[int], end_id: int) -> list[int]:
    """1 on assistant reply tokens (up to and including the end-of-turn token), 0 elsewhere."""
    mask = [0] * len(ids)
    i, n, h = 0, len(ids), len(header)
    while i < n:
        if ids[i : i + h] == header:
            j = i + h
            while j < n and ids[j] != end_id:
                mask[j] = 1
                j += 1
            if j < n:
                mask[j] = 1
            i = j + 1
        else:
            i += 1
    return mask


def warmup_sft(
    model: Any,
    processor: Any,
    conversations: Sequence[list[dict[str, Any]]],
    tools: list[Any],
    *,
    steps: int,
    learning_rate: float,
    batch_size: int,
    seed: int = 0,
) -> WarmupReport:
    """Supervised steps on whole conversations, loss on the assistant tokens only.

    Each example is rendered with the same chat template and tool list that GRPO uses, so the
    tokens learned here are the tokens the rollouts produce. Examples are processed one at a
    time (they differ in image count) with the gradient averaged over ``batch_size`` of them.
    """
    torch = require("torch", "train", "the AutoTool warm-up")
    report = WarmupReport()
    if steps <= 0 or not conversations:
        return report
    tokenizer = getattr(processor, "tokenizer", processor)
    header = tokenizer.encode(f"{IM_START}assistant\n", add_special_tokens=False)
    end_id = tokenizer.convert_tokens_to_ids(IM_END)
    encoded = []
    for convo in conversations:
        enc = processor.apply_chat_template(
            convo, tools=tools, tokenize=True, return_dict=True, return_tensors="pt"
        )
        ids = enc["input_ids"][0].tolist()
        mask = torch.tensor(_assistant_mask(ids, header, end_id), dtype=torch.bool)
        labels = enc["input_ids"].clone()
        labels[0, ~mask] = -100
        enc["labels"] = labels
        encoded.append(enc)
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    was_training = model.training
    model.train()
    start = time.perf_counter()
    for _ in range(steps):
        order = torch.randperm(len(encoded), generator=gen)[:batch_size].tolist()
        optimizer.zero_grad()
        total = 0.0
        for idx in order:
            batch = {k: v.to(device) for k, v in encoded[idx].items()}
            loss = model(**batch).loss / len(order)
            loss.backward()
            total += float(loss.detach())
        optimizer.step()
        report.losses.append(total)
    report.steps = steps
    report.seconds = time.perf_counter() - start
    if not was_training:
        model.eval()
    return report


# ------------------------------------------------------------------------------------------------
# Logging AMB every step.


def _callback_base() -> Any:
    transformers = require("transformers", "train", "AutoTool training")
    return transformers.TrainerCallback


class AMBLogCallback:
    """Writes each AMB update (step, ratio, both lambdas) to a JSONL file as training goes.

    Built through :func:`make_amb_callback` so that transformers is imported lazily; the
    instance is a real ``TrainerCallback``.
    """

    def __init__(self, controller: AMBController, path: Path) -> None:
        self.controller = controller
        self.path = path
        self._written = 0

    def flush(self) -> None:
        """Append the updates not yet written."""
        new = self.controller.history[self._written :]
        if not new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            for state in new:
                fh.write(state.model_dump_json() + "\n")
        self._written += len(new)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.flush()
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.flush()
        return control


def make_amb_callback(controller: AMBController, path: Path) -> Any:
    """An :class:`AMBLogCallback` that is also a ``transformers.TrainerCallback``."""
    base = _callback_base()
    cls = type("AMBTrainerCallback", (AMBLogCallback, base), {})
    return cls(controller, path)


# ------------------------------------------------------------------------------------------------
# Building and running.


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
        )
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")
        return summary

    def _all_envs(self) -> list[ZoomToolEnvironment]:
        pool = getattr(self.trainer, "_environment_pool", None) or {}
        envs = [e for instances in pool.values() for e in instances]
        return envs or self.environments


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
        from eviseek.testing.tiny_vlm import build_tiny_vlm

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
    return model, processor, path


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
    dataset = trl_dataset(train_rows, coords, frame)
    factory = functools.partial(ZoomToolEnvironment, coords, frame, cfg.zoom.settings)
    probe = factory()

    warm = WarmupReport()
    if cfg.warmup.steps:
        convos = [ideal_conversation(r, factory(), coords, frame) for r in train_rows]
        warm = warmup_sft(
            model,
            processor,
            convos,
            [probe.image_zoom_in_tool],
            steps=cfg.warmup.steps,
            learning_rate=cfg.warmup.learning_rate,
            batch_size=cfg.warmup.batch_size,
            seed=cfg.grpo.seed,
        )

    amb = AMBController(cfg.amb)
    r = cfg.rewards
    accuracy = AccuracyReward(judge=r.judge)
    tool = ToolReward(
        on_correct=r.on_correct, on_wrong=r.on_wrong, off_correct=r.off_correct, amb=amb, accuracy=accuracy
    )
    tokenizer = processor.tokenizer
    reward_funcs = [
        FullRolloutReward(accuracy, tokenizer, monitor=True),
        FullRolloutReward(FormatReward(), tokenizer),
        FullRolloutReward(tool, tokenizer),
    ]

    g = cfg.grpo
    extra = dict(g.extra)
    if g.gradient_checkpointing:
        # Passed only when wanted: the argument is deprecated in transformers 5 and warns when set.
        extra.setdefault("gradient_checkpointing", True)
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
        reward_weights=[r.accuracy_weight, r.format_weight, r.tool_weight],
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
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=dataset,
        processing_class=processor,
        environment_factory=factory,
        callbacks=[callback],
    )
    return AutoToolRun(cfg, trainer, model_path, amb, warm, [probe])


def train_autotool(cfg: AutoToolTrainConfig, *, save: bool = True) -> TrainSummary:
    """Build and run a training job from a validated config."""
    return build_trainer(cfg).train(save=save)
