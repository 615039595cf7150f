"""Tests' name for the tiny Qwen3-VL builder, which lives in :mod:`eviseek.train.tiny_model`.

The library itself (``tiny_model:`` in training configs) imports it from there, so the library
never imports :mod:`eviseek.testing`.
"""

from eviseek.train.tiny_model import (
    SPECIAL_TOKENS,
    TAG_TOKENS,
    TinyVLMConfig,
    build_tiny_vlm,
    load_tiny_vlm,
    qwen3_vl_chat_template,
)

__all__ = [
    "SPECIAL_TOKENS",
    "TAG_TOKENS",
    "TinyVLMConfig",
    "build_tiny_vlm",
    "load_tiny_vlm",
    "qwen3_vl_chat_template",
]
