"""The configuration of ``eviseek train autotool``: one YAML or JSON file, validated up front.

Every setting a run needs lives in :class:`AutoToolTrainConfig`. Validation rejects
combinations that cannot work (a generation batch that does not split into groups, a
completion budget too short to hold a tool call, an AMB schedule longer than the run ...) with
a message that says which field to change and how, before any model is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eviseek.envs.image.zoom import ZoomSettings
from eviseek.errors import ConfigError
from eviseek.train.amb import AMBConfig
from eviseek.train.data import SyntheticConfig
from eviseek.train.frames import Coordinates
from eviseek.train.rewards import RewardSettings
from eviseek.train.tag_grid import TagGridConfig
from eviseek.train.tiny_model import TinyVLMConfig

Layout = Literal["deepeyes", "vstar", "arxivqa", "thinklite", "saved"]

MIN_TOOL_COMPLETION_TOKENS = 64
"""Below this, no completion can hold a tool call, the tool's reply and an answer: TRL would
silently drop the tool's image (the call is still counted), which looks like training but is not."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SyntheticData(SyntheticConfig):
    """Generated high-resolution images with small targets (see :mod:`eviseek.train.data`)."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(default=16, ge=1)
    seed: int = 0


class TagGridData(TagGridConfig):
    """Tag-grid questions (see :mod:`eviseek.train.tag_grid`): the learning run's task."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(default=64, ge=1)
    seed: int = 0


class FileData(_Strict):
    """Training rows read from a file in one of the public layouts."""

    path: Path
    layout: Layout
    limit: int | None = Field(default=None, ge=1)


class DataConfig(_Strict):
    """Where the training questions come from: exactly one of ``synthetic``, ``tag_grid`` or ``file``."""

    synthetic: SyntheticData | None = None
    tag_grid: TagGridData | None = None
    file: FileData | None = None

    @model_validator(mode="after")
    def _one_source(self) -> DataConfig:
        if sum(x is not None for x in (self.synthetic, self.tag_grid, self.file)) != 1:
            raise ValueError(
                "data needs exactly one source: 'synthetic: {n: 16}', 'tag_grid: {n: 64}' or "
                "'file: {path: train.parquet, layout: deepeyes}'"
            )
        return self


class CropCheckConfig(_Strict):
    """Ours: keep the crop phase going until the model reads the crop (see :mod:`eviseek.train.crop_check`).

    After ``crop_steps``, and every ``every`` steps after that, the need-zoom questions of
    ``data`` (tag-grid questions the warm-up and GRPO never train on) are read teacher-forced with
    ``<tool_on>``; the phase stops once the share read right reaches ``target``, or at
    ``max_crop_steps`` whether it passed or not (the warm-up report says which)."""

    data: DataConfig
    target: float = Field(default=0.75, gt=0, le=1)
    every: int = Field(default=100, ge=1)
    max_crop_steps: int = Field(default=2500, ge=1)


class ModePriorConfig(_Strict):
    """Ours (issue 39): a phase after the warm-up that fits only the reply's first token, to
    ``<tool_on>`` with one share on need-zoom questions and another on the rest, both below one
    half so the greedy choice stays ``<tool_off>`` everywhere. It gives the tiny random model a
    mode prior that depends on the kind of question, which a pretrained model has from
    pretraining (see ``eviseek.train.trl_autotool.mode_prior``)."""

    steps: int = Field(ge=1)
    learning_rate: float = Field(default=1e-3, gt=0)
    batch_size: int = Field(default=16, ge=1)
    tool_on_need_zoom: float = Field(default=0.4, gt=0, lt=0.5)
    """Share of ``<tool_on>`` draws on need-zoom questions (below 0.5: greedy stays ``<tool_off>``)."""
    tool_on_other: float = Field(default=0.2, gt=0, lt=0.5)
    """Share of ``<tool_on>`` draws on every other question."""
    rehearsal_batch: int = Field(default=0, ge=0)
    """Whole traces drawn per step, their reply tokens in the loss: without them the phase fits the
    first token and forgets the rest of the reply."""
    rehearsal_mode_token: bool = False
    """Whether the rehearsal traces' mode token is in their loss too (they are then drawn at the
    stated shares). Off: the first-token loss alone sets the prior, and the rehearsal, both modes
    drawn alike, only keeps the rest of the reply (on seed 4 the drawn mode tokens of the
    rehearsal held the kinds' gap at 0.03 after 60 steps)."""
    loss: Literal["drawn", "expected"] = "drawn"
    """``drawn``: the cross-entropy of one drawn mode per (question, mode) draw; ``expected``: its
    expectation over the two modes at the question's shares (the same target without the draw's
    noise; the question is still drawn)."""


class WarmupConfig(_Strict):
    """A short supervised overfit before GRPO, so a random or weak model emits the protocol.

    It teaches the exact reply shapes on the training rows themselves (a zoom call on the
    target box followed by the answer for rows that need zooming, a direct answer otherwise).
    Use it for smoke runs with a random model; a real checkpoint needs ``steps: 0``.
    """

    steps: int = Field(default=0, ge=0)
    modes: Literal["ideal", "both", "tool_on", "tool_off"] = "ideal"
    """Which replies to teach: ``ideal`` (tool-on where the row needs a zoom, tool-off
    elsewhere), ``both`` (each row in both modes, so the mode choice is left to GRPO),
    ``tool_on`` or ``tool_off`` only (the always-tool and text-only baselines)."""
    learning_rate: float = Field(default=3e-3, gt=0)
    batch_size: int = Field(default=4, ge=1)
    schedule: Literal["constant", "linear"] = "constant"
    """Learning rate over the warm-up: constant, or decaying linearly to zero (it lets the fine
    dependencies fit after the format is learned)."""
    mask_unseen_answers: bool = False
    """Ours: no loss on the answer of a tool-off trace for a row that needs a zoom. That answer
    cannot be read from the shown image, so fitting it teaches guessing; the mode token and the
    reply's format are still taught."""
    need_zoom_weight: float = Field(default=1.0, gt=0)
    """Ours: how many times as often the traces of rows that need a zoom are drawn (both modes
    alike, so the mode prior per question is unchanged); more examples of reading the crop."""
    tool_off_weight: float = Field(default=1.0, gt=0)
    """Ours: how many times as often the ``<tool_off>`` traces are drawn as the ``<tool_on>`` ones
    (with ``modes: both``). Above 1 the warm-up's greedy mode prior becomes ``<tool_off>`` on every
    kind of question, as the paper's base model's is (section 3.3), while both modes stay taught."""
    crop_steps: int = Field(default=0, ge=0)
    """Ours: steps after the mixed ``steps`` on tool-on traces of the rows that need a zoom only,
    with the mode token out of the loss (practice at reading the crop that teaches no mode
    choice); at ``crop_learning_rate``, constant."""
    crop_learning_rate: float = Field(default=1e-3, gt=0)
    crop_rehearsal: float = Field(default=0.0, ge=0.0, lt=1.0)
    """Ours: share of the crop phase's draws that are traces of rows that need no zoom (both modes,
    their mode tokens kept in the loss so the model goes on writing one); without them the crop
    phase forgets the background answers."""
    crop_check: CropCheckConfig | None = None
    """Ours: extend the crop phase until a held-out crop-reading check passes (with a cap)."""
    mode_prior: ModePriorConfig | None = None
    """Ours: a last phase that makes the mode prior depend on the kind of question (see
    :class:`ModePriorConfig`); ``None``: the prior is the same on every kind."""
    crop_answer_only: bool = False
    """Ours: the crop phase's loss covers only the final answer's tokens. Training the rest of the
    crop traces without their mode token made the model stop writing a mode token at all."""
    data: DataConfig | None = None
    """The warm-up's own questions (default: the GRPO questions of ``data``). Ours: a warm-up fitted
    to a loss near 0.01 can know the answers of its own questions in either mode (the learning
    run's mixed warm-up answered its own need-zoom questions at 0.50 with the zoom shown or not,
    against 0.32 on new ones), and GRPO on them would then see no gain from a zoom. Questions of
    its own keep GRPO's questions new, as they are for a real checkpoint."""

    @model_validator(mode="after")
    def _check_crop(self) -> WarmupConfig:
        c = self.crop_check
        if c is None:
            return self
        if self.crop_steps <= 0:
            raise ValueError("warmup.crop_check extends the crop phase: set warmup.crop_steps above 0")
        if c.data.tag_grid is None:
            raise ValueError("warmup.crop_check.data must be 'tag_grid: {...}' (it reads tag colours)")
        if c.max_crop_steps < self.crop_steps:
            raise ValueError(
                f"warmup.crop_check.max_crop_steps ({c.max_crop_steps}) is below warmup.crop_steps "
                f"({self.crop_steps}); raise it to at least crop_steps"
            )
        return self


class GRPOSettings(_Strict):
    """The GRPO settings handed to TRL's ``GRPOConfig`` (paper values in the comments)."""

    max_steps: int = Field(default=80, ge=1)  # paper: 80 iterations
    learning_rate: float = Field(default=1e-6, gt=0)  # paper: 1e-6, AdamW
    num_generations: int = Field(default=16, ge=2)  # paper: 16 rollouts per query
    per_device_train_batch_size: int = Field(default=16, ge=1)
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    steps_per_generation: int | None = Field(default=None, ge=1)
    num_iterations: int = Field(default=1, ge=1)
    max_completion_length: int = Field(default=20480, ge=1)  # paper: 20,480 tokens
    max_tool_calling_iterations: int = Field(default=5, ge=1)
    temperature: float = Field(default=1.0, gt=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    beta: float = Field(default=0.0, ge=0)  # no KL term, as in DeepEyes
    epsilon: float = Field(default=0.2, gt=0)  # paper: clip 0.2
    loss_type: str = "dapo"
    """How TRL aggregates the per-token losses. ``dapo`` (the default): token-level, every token of
    the generation batch weighs the same (summed, divided by the batch's active tokens), as verl's
    default ``actor.loss_agg_mode: token-mean`` that the paper trained with; long tool-on rollouts
    weigh by their length. ``grpo``: per sequence (each completion's token mean, then the mean over
    completions), so a long rollout weighs as much as a short one. Other TRL values pass through."""
    logging_steps: int = Field(default=1, ge=1)
    save_steps: int | None = Field(default=None, ge=1)
    seed: int = 0
    bf16: bool = False
    gradient_checkpointing: bool = False
    use_cpu: bool = False
    use_vllm: bool = False
    vllm_mode: Literal["colocate", "server"] = "colocate"
    vllm_gpu_memory_utilization: float = Field(default=0.3, gt=0, le=1)
    report_to: list[str] = Field(default_factory=list)
    log_completions: bool = False
    force_mode: Literal["tool_on", "tool_off"] | None = None
    """Pin the rollouts' mode: the other mode token is suppressed at sampling, so it can never be
    chosen (the ``always_tool`` and ``text_only`` rows of the paper's component table). Not with
    vLLM."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Further ``GRPOConfig`` fields passed through unchanged (checked by TRL itself)."""


class ZoomToolConfig(_Strict):
    """How the zoom tool reads boxes and which boxes it accepts."""

    coordinates: Coordinates = "shown"
    """Frame of the model's boxes: ``shown`` (pixels of the image after the processor resized
    it, as Qwen2.5-VL writes them), ``original`` (pixels of the file) or ``normalized_1000``
    (a 0..1000 grid, as Qwen3-VL writes them)."""
    settings: ZoomSettings = Field(default_factory=ZoomSettings)
    enabled: bool = True
    """``false``: no tool in the rollouts (text-only GRPO, row #1 of the paper's component table)."""


class AutoToolTrainConfig(_Strict):
    """Everything ``eviseek train autotool`` needs. Load with :func:`load_config`."""

    model: str | None = None
    """A local directory or a hub id (already downloaded), e.g. ``Qwen/Qwen3-VL-8B-Instruct``."""
    tiny_model: TinyVLMConfig | None = None
    """Build a tiny random Qwen3-VL offline instead of loading ``model`` (smoke runs)."""
    output_dir: Path = Path("runs/autotool-trl")
    data: DataConfig
    warmup: WarmupConfig = Field(default_factory=WarmupConfig)
    grpo: GRPOSettings = Field(default_factory=GRPOSettings)
    rewards: RewardSettings = Field(default_factory=RewardSettings)
    amb: AMBConfig = Field(default_factory=AMBConfig)
    zoom: ZoomToolConfig = Field(default_factory=ZoomToolConfig)
    prompt_style: Literal["full", "compact"] = "full"
    """``full``: the AutoTool prompts (the paper's content, our words). ``compact``: three lines
    with the same choices, for tiny models on a CPU where the full prompt dominates every
    sequence (see :func:`eviseek.autotool.prompts.system_prompt`)."""
    torch_threads: int | None = Field(default=None, ge=1)
    """Intra-op threads for torch on CPU (``None``: torch's default). A tiny model on a small,
    busy machine can run several times faster on one thread, whose work is not held up waiting
    for a second core; ``benchmarks/grpo_step.py`` times both settings side by side."""
    max_image_pixels: int | None = Field(default=None, ge=1024)
    """Cap on the area of each image after the processor resizes it (the processor's default
    otherwise). The model sees the image at this size, and ``shown`` boxes refer to it."""

    @model_validator(mode="after")
    def _check(self) -> AutoToolTrainConfig:
        g = self.grpo
        if (self.model is None) == (self.tiny_model is None):
            raise ValueError(
                "set exactly one of 'model' (a checkpoint directory or hub id) or 'tiny_model: {}' "
                "(a tiny random model built offline for smoke runs)"
            )
        if g.max_completion_length < MIN_TOOL_COMPLETION_TOKENS:
            raise ValueError(
                f"grpo.max_completion_length={g.max_completion_length} cannot hold a tool call, the "
                f"tool's reply (with the crop's image tokens) and an answer; use at least "
                f"{MIN_TOOL_COMPLETION_TOKENS} (the paper used 20480)"
            )
        generation_batch = g.per_device_train_batch_size * g.gradient_accumulation_steps
        if g.steps_per_generation is not None:
            generation_batch = g.per_device_train_batch_size * g.steps_per_generation
        if generation_batch % g.num_generations:
            raise ValueError(
                f"the generation batch ({generation_batch} = per_device_train_batch_size x "
                f"{'steps_per_generation' if g.steps_per_generation else 'gradient_accumulation_steps'}) "
                f"must be a multiple of grpo.num_generations ({g.num_generations}) so every question "
                f"gets a full group; e.g. set per_device_train_batch_size to {g.num_generations}"
            )
        if g.bf16 and g.use_cpu:
            raise ValueError("grpo.bf16 needs a GPU; drop bf16 or use_cpu")
        if g.use_vllm and (g.use_cpu or self.tiny_model is not None):
            raise ValueError(
                "grpo.use_vllm needs a GPU and a real checkpoint: set use_vllm: false for CPU or tiny runs"
            )
        if g.force_mode is not None and g.use_vllm:
            raise ValueError(
                "grpo.force_mode suppresses a token in transformers' sampling; set use_vllm: false"
            )
        if not self.zoom.enabled and g.force_mode == "tool_on":
            raise ValueError("grpo.force_mode: tool_on needs the tool; set zoom.enabled: true")
        if self.amb.total_steps is None and self.amb.release_step is None:
            # The run's length is known here, so AMB's default release (the last quarter) applies.
            self.amb = self.amb.model_copy(update={"total_steps": g.max_steps})
        release = self.amb.release_at
        if self.amb.total_steps is not None and self.amb.total_steps != g.max_steps:
            raise ValueError(
                f"amb.total_steps ({self.amb.total_steps}) differs from grpo.max_steps ({g.max_steps}); "
                "set them equal or use amb.release_step"
            )
        if release is not None and release > g.max_steps:
            raise ValueError(
                f"AMB would release at step {release}, after the run ends (grpo.max_steps={g.max_steps}); "
                "lower amb.release_step or raise grpo.max_steps"
            )
        if not self.zoom.enabled and self.rewards.tool_scheme != "none":
            raise ValueError(
                "zoom.enabled is false but rewards.tool_scheme rewards tool use; "
                "set rewards.tool_scheme: none (text-only GRPO)"
            )
        return self


def load_config(
    path: str | Path, overrides: dict[str, Any] | None = None, *, preset: str | None = None
) -> AutoToolTrainConfig:
    """Read a YAML (``.yaml``/``.yml``) or JSON file into a validated config.

    ``preset`` (or a top-level ``preset:`` key in the file) applies one of
    :data:`eviseek.train.presets.PRESETS` first; ``overrides`` are dotted keys applied after
    it, before validation, e.g. ``{"grpo.max_steps": 2}``. Errors name the file and the field
    and say how to fix it.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {p} does not exist")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix in (".yaml", ".yml"):
            import yaml

            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:  # not a ValueError: caught here, one line
                raise ConfigError(f"cannot read {p}: {' '.join(str(exc).split())}") from None
        elif p.suffix == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(f"config file {p} must end in .yaml, .yml or .json")
    except (ValueError, ImportError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"cannot read {p}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{p} must hold a mapping of settings at the top level")
    from eviseek.train.presets import HOLDS_AMB, RELEASE_KEYS, preset_overrides

    name = preset or data.pop("preset", None)
    data.pop("preset", None)
    if name is not None:
        try:
            preset_values = preset_overrides(str(name))
        except KeyError as exc:
            raise ConfigError(f"{p}: {exc.args[0]}") from exc
        if name in HOLDS_AMB and isinstance(data.get("amb"), dict):
            # The row holds AMB all run long: the file's release schedule (written for the full
            # recipe) must not turn it into the release row.
            for key in RELEASE_KEYS:
                data["amb"].pop(key, None)
        for key, value in preset_values.items():
            _set_dotted(data, key, value)
    for key, value in (overrides or {}).items():
        if name in HOLDS_AMB and key in {f"amb.{k}" for k in RELEASE_KEYS} and value is not None:
            raise ConfigError(
                f"preset {name} holds AMB all run long (it never releases), so {key}={value} "
                "contradicts it; drop the override or use --preset release/autotool"
            )
        _set_dotted(data, key, value)
    base = p.parent
    try:
        cfg = AutoToolTrainConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{p}: {format_validation_error(exc)}") from exc
    # Relative data paths are read relative to the config file, so configs travel with their data.
    if cfg.data.file is not None and not cfg.data.file.path.is_absolute():
        cfg.data.file.path = base / cfg.data.file.path
    return cfg


def format_validation_error(exc: ValidationError) -> str:
    """One line per problem: the dotted field and pydantic's message (with our fix hints)."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown setting (check the spelling against the example configs in examples/)"
        lines.append(f"{loc}: {msg}")
    return "; ".join(lines)


def _set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value
