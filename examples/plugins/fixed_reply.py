"""A model provider in one module: ``fixed/<name>`` answers every call with one settable text.

One settings model, one model class, one ``register_provider`` call. Load it with ``--plugin``:

    eviseek eval --plugin examples/plugins/fixed_reply.py --model fixed/yes \
        --model-arg reply=yes --agents passive --dataset tabletop:dev --limit 2 --out runs/fixed

The registry checks ``--model-arg`` pairs against the settings model before anything runs (an
unknown or out-of-range one is a one-line error naming it) and builds the model with
``factory(name, settings)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import Field

from eviseek.models import register_provider
from eviseek.models.settings import ProviderSettings
from eviseek.types import ChatMessage, Completion, GenerateConfig, Usage, count_images


class FixedSettings(ProviderSettings):
    """What ``--model-arg`` may set (unknown keys are refused; ``ProviderSettings`` sees to it)."""

    reply: str = "yes"
    delay_s: float = Field(0.0, ge=0)


class FixedReplyModel:
    """Anything with ``name`` and ``async generate(messages, config) -> Completion`` is a model."""

    def __init__(self, name: str, settings: FixedSettings) -> None:
        self.name = f"fixed/{name}"
        self.settings = settings

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        await asyncio.sleep(self.settings.delay_s)
        usage = Usage(images_sent=count_images(list(messages)))  # token counts unknown: None
        return Completion(text=self.settings.reply, usage=usage, model=self.name, finish_reason="stop")


# The loader returns the factory (heavy imports can wait inside it). remote=True would add
# --base-url, --api-key-env and the timeout to the settings passed, and a check before each run.
register_provider(
    "fixed", lambda: FixedReplyModel, "one fixed reply (an example plugin)", settings=FixedSettings
)
