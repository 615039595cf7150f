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

from eviseek.train.frames import ImageFrame
from eviseek.train.rollouts import rollout_messages
from eviseek.train.trl_autotool.callbacks import AMBLogCallback, make_amb_callback
from eviseek.train.trl_autotool.dataset import load_rows, prompt_for, trl_dataset
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment
from eviseek.train.trl_autotool.reward_wrappers import FullRolloutReward
from eviseek.train.trl_autotool.run import (
    AutoToolRun,
    TrainSummary,
    build_trainer,
    load_model_and_processor,
    train_autotool,
)
from eviseek.train.trl_autotool.warmup import (
    WarmupReport,
    _assistant_mask,
    ideal_conversation,
    warmup_sft,
)

__all__ = [
    "AMBLogCallback",
    "AutoToolRun",
    "FullRolloutReward",
    "ImageFrame",
    "TrainSummary",
    "WarmupReport",
    "ZoomToolEnvironment",
    "_assistant_mask",
    "build_trainer",
    "ideal_conversation",
    "load_model_and_processor",
    "load_rows",
    "make_amb_callback",
    "prompt_for",
    "rollout_messages",
    "train_autotool",
    "trl_dataset",
    "warmup_sft",
]
