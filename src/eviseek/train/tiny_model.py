"""A tiny, randomly initialised Qwen3-VL model and processor, built entirely offline.

Tests and smoke runs need a real vision-language architecture without downloading anything.
:func:`build_tiny_vlm` writes one into a directory:

- a byte-level BPE tokenizer trained on the spot on a small built-in corpus, with the Qwen
  special tokens (``<|im_start|>``, ``<|im_end|>``, ``<|vision_start|>``, ``<|image_pad|>``, ...)
  and the tool-calling and AutoTool tags as whole tokens;
- TRL's own Qwen3-VL chat template, byte for byte: TRL recognises chat templates by exact
  comparison and only then attaches its tool-call parser, so a look-alike would silently disable
  tool calling;
- the PIL Qwen2-VL image processor with ``patch_size`` equal to the vision tower's (16 for
  Qwen3-VL) and a small pixel budget so images become a handful of tokens;
- a :class:`~eviseek.models._hf_compat.NoVideoQwen3VLProcessor`, because the stock processor
  requires a video processor that needs torchvision;
- a ``Qwen3VLForConditionalGeneration`` of a few hundred thousand parameters.

Builds are cached per process (keyed by the settings), so several tests share one directory.
Needs the ``train`` extra (transformers, and trl for its chat template).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from eviseek._lazy import require

SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
"""Control tokens that never appear in decoded text meant for people."""

TAG_TOKENS: tuple[str, ...] = (
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
    "<tool_on>",
    "<tool_off>",
    "<answer>",
    "</answer>",
)
"""Tags kept as single tokens but decoded like text (as real Qwen checkpoints do for tool tags),
so response parsers see them."""


class TinyVLMConfig(BaseModel):
    """Sizes of the tiny model. The defaults train a GRPO step in well under a second on a CPU."""

    model_config = ConfigDict(frozen=True)

    seed: int = 0
    vocab_size: int = 2048
    hidden_size: int = 128
    intermediate_size: int = 256
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 32
    vision_depth: int = 1
    vision_hidden_size: int = 32
    patch_size: int = 16
    """Vision patch size; the image processor gets the same value or token counts disagree."""
    max_image_pixels: int = 128 * 128
    """Largest image area after resizing: 128x128 pixels become 16 image tokens."""
    min_image_pixels: int = 32 * 32
    max_position_embeddings: int = 4096
    mode_tokens: bool = True
    """``False`` leaves ``<tool_on>``/``<tool_off>`` out of the tokenizer, as in a checkpoint that
    was never trained for AutoTool (tests of :mod:`eviseek.train.mode_tokens`)."""


_LOCK = threading.Lock()
_CACHE: dict[str, Path] = {}
_TMP_ROOT: Path | None = None


def build_tiny_vlm(directory: str | Path | None = None, config: TinyVLMConfig | None = None) -> Path:
    """Write a tiny random Qwen3-VL model and its processor to ``directory`` and return the path.

    With no ``directory`` the model goes to a per-process temporary directory, and a second call
    with the same ``config`` returns the same path without rebuilding. Load it back with
    :func:`load_tiny_vlm` or the ``hf/<path>`` model provider.
    """
    cfg = config or TinyVLMConfig()
    key = cfg.model_dump_json()
    with _LOCK:
        if directory is None and key in _CACHE and (_CACHE[key] / "config.json").is_file():
            return _CACHE[key]
        out = Path(directory) if directory is not None else _tmp_root() / f"tiny-qwen3vl-{len(_CACHE)}"
        _write_tiny_vlm(out, cfg)
        if directory is None:
            _CACHE[key] = out
        return out


def load_tiny_vlm(path: str | Path) -> tuple[Any, Any]:
    """Load ``(model, processor)`` written by :func:`build_tiny_vlm` (model in float32, eval mode)."""
    transformers = require("transformers", "hf", "the tiny test model")
    from eviseek.models._hf_compat import NoVideoQwen3VLProcessor

    model = transformers.Qwen3VLForConditionalGeneration.from_pretrained(str(path), dtype="float32")
    model.eval()
    return model, NoVideoQwen3VLProcessor.from_directory(path)


def _tmp_root() -> Path:
    global _TMP_ROOT
    if _TMP_ROOT is None:
        _TMP_ROOT = Path(tempfile.mkdtemp(prefix="eviseek-tiny-vlm-"))
        atexit.register(shutil.rmtree, _TMP_ROOT, True)
    return _TMP_ROOT


def qwen3_vl_chat_template() -> str:
    """TRL's Qwen3-VL chat template, read from the installed TRL so it matches byte for byte."""
    require("trl", "train", "the Qwen3-VL chat template that TRL recognises")
    from trl.chat_template_utils import qwen3_vl_chat_template as template

    return str(template)


def _corpus() -> list[str]:
    """Text the tokenizer is trained on: plain English, digits, JSON and the chat layout.

    The corpus only shapes how text splits into tokens; a byte-level model can still encode any
    string. Covering the tool-call JSON keeps tool calls short, which matters for
    ``max_completion_length`` in the smoke training.
    """
    words = (
        "the a an of to in is on at and or with what which where how many color colour red green "
        "blue yellow black white orange purple small large left right top bottom above below image "
        "object square circle question answer option yes no zoom region look think tool call name "
        "arguments label box target found count shape letter number first second there are this "
        "that it its in the picture near far corner centre center middle"
    ).split()
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 5)]
    lines += [f"{i} {i * 7 % 1000} [{i}, {i + 16}, {i + 64}, {i + 128}]" for i in range(0, 400, 7)]
    lines += [
        '{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [10, 20, 300, 400], "label": "red square"}}',
        '{"type": "function", "function": {"name": "image_zoom_in_tool", "description": "Zoom in"}}',
        '{"bbox_2d": [0, 0, 64, 64]} {"error": "box too small"} "parameters": {"type": "object"}',
        "You may call one or more functions to assist with the user query.",
        "Answer with the option letter. (A) red (B) green (C) blue (D) yellow",
        "<think>The target is small so I zoom in.</think><answer>A</answer>",
        "# Tools\n\nYou are provided with function signatures within <tools></tools> XML tags:",
        "system\nuser\nassistant\ntool\n\n",
    ]
    # eviseek's own AutoTool prompts and TRL's tool header: a model built for smoke training
    # then spends a few hundred tokens on a prompt instead of over a thousand.
    from eviseek.autotool.prompts import answer_format, system_prompt, user_prompt

    lines += [system_prompt(tools=True), system_prompt(tools=False), system_prompt(compact=True)]
    lines += [
        user_prompt("Which letter is printed on the small white tag?", answer_format=answer_format(k))
        for k in ("option", "yes_no", "integer", "text")
    ]
    lines += [
        user_prompt(
            "Is the large red rectangle in the left or the right half of the image?", image_size=(128, 96)
        )
    ]
    # The learning run's tag-grid questions (eviseek.train.tag_grid) and its zoom boxes.
    lines += [
        user_prompt(
            f"What colour is the small tag in row {r}, column {c}? "
            "Answer with one of: red, green, blue, yellow.",
            answer_format=answer_format("text"),
            image_size=(64, 64),
        )
        for r in range(1, 5)
        for c in range(1, 5)
    ]
    lines += [
        "What colour is the background? Answer with one of: red, green, blue, yellow.",
        "Zoom: the detail is small. Seen in the crop. Direct: the whole view is enough.",
    ]
    lines += [f"[{x}, {y}, {x + 16}, {y + 16}]" for x in range(0, 64, 16) for y in range(0, 64, 16)]
    return lines * 4


def _build_tokenizer(cfg: TinyVLMConfig) -> Any:
    tokenizers = require("tokenizers", "hf", "training the tiny tokenizer")
    transformers = require("transformers", "hf", "the tiny test model")

    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    # Byte-level pre-tokenisation, as Qwen's tokenizer does: every string is encodable.
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=cfg.vocab_size - len(TAG_TOKENS),  # the same merges with or without the mode tokens
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    tags = (
        TAG_TOKENS
        if cfg.mode_tokens
        else tuple(t for t in TAG_TOKENS if t not in ("<tool_on>", "<tool_off>"))
    )
    tok.add_tokens([tokenizers.AddedToken(t, special=False, normalized=False) for t in tags])
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        model_max_length=cfg.max_position_embeddings,
        chat_template=qwen3_vl_chat_template(),
    )
    return fast


def _write_tiny_vlm(out: Path, cfg: TinyVLMConfig) -> None:
    torch = require("torch", "hf", "the tiny test model")
    transformers = require("transformers", "hf", "the tiny test model")
    from eviseek.models._hf_compat import NoVideoQwen3VLProcessor

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = _build_tokenizer(cfg)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    merge = 2
    image_processor = transformers.Qwen2VLImageProcessorPil(
        patch_size=cfg.patch_size,
        merge_size=merge,
        temporal_patch_size=2,
        size={"shortest_edge": cfg.min_image_pixels, "longest_edge": cfg.max_image_pixels},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
    )
    processor = NoVideoQwen3VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=None,
        chat_template=tokenizer.chat_template,
    )
    half = cfg.head_dim // 2
    # Multimodal rotary sections (time, height, width) must add up to half the head dimension.
    mrope = [half - 2 * (half * 5 // 16), half * 5 // 16, half * 5 // 16]
    text_config = {
        "vocab_size": len(tokenizer),
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size,
        "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads,
        "num_key_value_heads": cfg.num_kv_heads,
        "head_dim": cfg.head_dim,
        "max_position_embeddings": cfg.max_position_embeddings,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 10000.0,
            "mrope_section": mrope,
            "mrope_interleaved": True,
        },
        "pad_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "bos_token_id": None,
    }
    vision_config = {
        "depth": cfg.vision_depth,
        "hidden_size": cfg.vision_hidden_size,
        "intermediate_size": cfg.vision_hidden_size * 2,
        "num_heads": 2,
        "patch_size": cfg.patch_size,
        "spatial_merge_size": merge,
        "temporal_patch_size": 2,
        "out_hidden_size": cfg.hidden_size,
        # A square number of learned positions; images larger than this grid are interpolated.
        "num_position_embeddings": 256,
        "deepstack_visual_indexes": [0],
    }
    config = transformers.Qwen3VLConfig(
        text_config=text_config,
        vision_config=vision_config,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(cfg.seed)
    model = transformers.Qwen3VLForConditionalGeneration(config)
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.bos_token_id = None
    model.save_pretrained(str(out))
    processor.save_pretrained(str(out))
    (out / "eviseek_tiny_vlm.json").write_text(cfg.model_dump_json(indent=2), encoding="utf-8")
