"""The Model protocol every provider implements, and a helper to record calls."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from eviseek.types import ChatMessage, Completion, GenerateConfig, ModelCall, count_images


@runtime_checkable
class Model(Protocol):
    """A vision-language model that turns interleaved text and images into text."""

    name: str
    """The registry id it was built from, e.g. ``openai/gpt-4o-mini``."""

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        """Generate one reply. Raises :class:`~eviseek.errors.ModelError` on infrastructure failure."""
        ...


async def generate_recorded(
    model: Model,
    messages: Sequence[ChatMessage],
    config: GenerateConfig | None = None,
) -> tuple[Completion, ModelCall]:
    """Call ``model`` and return the completion with a :class:`ModelCall` record of it.

    The record keeps the messages (images by reference), usage, latency and notes. A provider
    exception is recorded in ``ModelCall.error`` and then re-raised.
    """
    cfg = config or GenerateConfig()
    call = ModelCall(stage=cfg.stage, model=model.name, messages=list(messages), config=cfg)
    start = time.perf_counter()
    try:
        completion = await model.generate(messages, cfg)
    except Exception as exc:
        call.latency_s = time.perf_counter() - start
        call.error = f"{type(exc).__name__}: {exc}"
        raise
    call.output = completion.text
    call.usage = completion.usage
    if not call.usage.images_sent:
        call.usage.images_sent = count_images(list(messages))
    call.latency_s = completion.latency_s or (time.perf_counter() - start)
    call.notes = list(completion.notes)
    return completion, call
