"""Scripted replies per agent stage, for driving agents with :class:`ScriptedModel` in tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from eviseek.errors import ScriptExhaustedError
from eviseek.models import ScriptedModel
from eviseek.types import ChatMessage, GenerateConfig

Reply = str | dict[str, Any]
StageReplies = Sequence[Reply] | Callable[[GenerateConfig], Reply]


def stage_key(cfg: GenerateConfig) -> str:
    """The stage a request belongs to; the keeper's visibility check is keyed ``track``."""
    if cfg.stage == "keep" and cfg.metadata.get("purpose") == "track":
        return "track"
    return str(cfg.stage)


class StageScript:
    """Replies per stage, consumed in order; a stage asked for more than it was given fails loudly.

    A list entry may be a dict (sent as JSON) or a raw string (sent verbatim, for garbage tests).
    A callable receives the request's :class:`GenerateConfig` and returns the reply.
    """

    def __init__(self, **stages: StageReplies) -> None:
        self.stages = dict(stages)
        self.used: dict[str, int] = {}
        self.log: list[tuple[str, GenerateConfig, list[ChatMessage]]] = []

    def __call__(self, messages: Sequence[ChatMessage], cfg: GenerateConfig) -> str:
        key = stage_key(cfg)
        self.log.append((key, cfg, list(messages)))
        if key not in self.stages:
            raise ScriptExhaustedError(f"no scripted replies for stage {key!r}")
        src = self.stages[key]
        if callable(src):
            reply = src(cfg)
        else:
            i = self.used.get(key, 0)
            if i >= len(src):
                raise ScriptExhaustedError(
                    f"stage {key!r} was given {len(src)} replies and asked for {i + 1}"
                )
            self.used[key] = i + 1
            reply = src[i]
        return reply if isinstance(reply, str) else json.dumps(reply)

    def calls(self, key: str) -> list[tuple[GenerateConfig, list[ChatMessage]]]:
        """The requests made for one stage, in order."""
        return [(c, m) for k, c, m in self.log if k == key]

    def model(self) -> ScriptedModel:
        """A scripted model answering from this script."""
        return ScriptedModel(self)
