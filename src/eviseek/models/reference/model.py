"""The ``reference/`` provider: a non-neural policy that plays every agent stage from pixels.

It answers the same requests a vision-language model gets (chat messages with images, plus the
request metadata real providers ignore: ``GenerateConfig.stage``, ``response_schema`` and
``metadata``) and replies with JSON that fits the stage's reply schema. The stage says what is
being asked; the question, its answer contract and the agent's own state (pose estimate, legal
actions, subtask goal) come from the metadata, which repeats what the prompt text states; the
scene comes only from the attached images and the action feedback in the text.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections.abc import Sequence
from typing import Any

from eviseek.models.reference.answering import (
    answer,
    explore_check,
    express_judge,
    forced_choice,
    from_schema,
    triage,
)
from eviseek.models.reference.planning import demands, plan
from eviseek.models.reference.request import Handler, Request
from eviseek.models.reference.seeking import coverage, curate, keep, seek
from eviseek.models.reference.single_model import single_step
from eviseek.models.settings import ReferenceSettings
from eviseek.types import ChatMessage, Completion, GenerateConfig, Stage, Usage, message_images

MODEL_ID = "reference/tabletop"

IMAGE_PATCH_PX = 28
"""Input tokens are estimated as a VLM would spend them: one token per 28 x 28 pixel patch of
each image plus about one per four characters of text."""


class ReferenceModel:
    """A pixel-only reference policy for the tabletop benchmark (not a neural model).

    Use it for demos and regression tests: it makes every agent stage produce well-formed,
    sensible replies without a GPU or an API key, and it clearly beats chance on the tabletop
    families when it gets informative views. It knows colour words and shapes, measures blobs
    in images and follows fixed viewing routines; it reads the question, the answer contract,
    the agent's reported pose, actions and feedback, and the images, and nothing else.
    """

    def __init__(self, *, name: str = MODEL_ID, delay_s: float = 0.0) -> None:
        self.name = name
        self.delay_s = delay_s
        self._lock = threading.Lock()
        self._handlers: dict[str, Handler] = {  # keyed by the agents' stage names
            Stage.PASSIVE: answer,
            Stage.ANSWER: answer,
            Stage.FORCED_CHOICE: forced_choice,
            Stage.SINGLE_STEP: single_step,
            Stage.DEMANDS: demands,
            Stage.PLAN: plan,
            Stage.SEEK: seek,
            Stage.KEEP: keep,
            Stage.CURATE: curate,
            Stage.COVERAGE: coverage,
            Stage.TRIAGE: triage,
            Stage.BLIND: answer,
            Stage.EXPLORE_CHECK: explore_check,
            Stage.EXPRESS_JUDGE: express_judge,
        }

    @classmethod
    def from_spec(cls, name: str, settings: ReferenceSettings | None = None, **kwargs: Any) -> ReferenceModel:
        """Registry factory: ``reference/<name>`` (``tabletop`` is the one policy there is), with
        one :class:`~eviseek.models.settings.ReferenceSettings` or its fields as keywords."""
        if kwargs or settings is None:
            given = dict(settings) if settings is not None else {}
            settings = ReferenceSettings.parse(f"reference/{name}", **{**given, **kwargs})
        return cls(name=f"reference/{name}", delay_s=settings.delay_s)

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        """Reply to one request; the image work runs in a thread so other episodes keep moving."""
        cfg = config or GenerateConfig()
        start = time.perf_counter()
        text = await asyncio.to_thread(self._reply, list(messages), cfg)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        usage = Usage(
            input_tokens=estimate_input_tokens(messages),
            output_tokens=max(1, math.ceil(len(text) / 4)),
            reasoning_tokens=0,
            images_sent=len(message_images(list(messages))),
        )
        return Completion(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=self.name,
            finish_reason="stop",
        )

    def reply(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, Any] | str:
        """The reply for one request: an object for a stage with a reply schema, else plain text."""
        req = Request(messages, config)
        handler = self._handlers.get(req.stage, from_schema)
        return handler(req)

    def _reply(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        with self._lock:  # the analysis cache is shared; one call at a time keeps it simple
            out = self.reply(messages, config)
        return out if isinstance(out, str) else json.dumps(out)


def estimate_input_tokens(messages: Sequence[ChatMessage]) -> int:
    """Approximate prompt tokens: text characters / 4 plus one per 28 x 28 patch of each image."""
    chars = sum(len(m.text()) for m in messages)
    patches = sum(
        math.ceil(img.width / IMAGE_PATCH_PX) * math.ceil(img.height / IMAGE_PATCH_PX)
        for img in message_images(list(messages))
    )
    return math.ceil(chars / 4) + patches
