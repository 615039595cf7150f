"""A model that replies from a script: for tests, examples and replaying recorded runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from eviseek.errors import ConfigError, ScriptExhaustedError
from eviseek.models.settings import ScriptedSettings
from eviseek.types import ChatMessage, Completion, GenerateConfig, Usage, count_images
from eviseek.types.jsonl import read_jsonl

ReplyFn = Callable[[Sequence[ChatMessage], GenerateConfig], str]


class ScriptedModel:
    """Replies from a list of strings, a callable, or a JSONL file, in order.

    A list (or file) that runs out raises :class:`ScriptExhaustedError` naming how many replies
    were given: a test that asks for more replies than it scripted fails loudly. Token usage is
    approximated by whitespace-separated words so cost accounting is exercised end to end.
    """

    def __init__(
        self,
        replies: Iterable[str] | ReplyFn,
        *,
        name: str = "scripted/test",
        delay_s: float = 0.0,
    ) -> None:
        self.name = name
        self.delay_s = delay_s
        self._fn: ReplyFn | None = None
        self._replies: list[str] = []
        if callable(replies):
            self._fn = replies
        else:
            self._replies = list(replies)
        self._next = 0
        self.requests: list[tuple[list[ChatMessage], GenerateConfig]] = []

    @classmethod
    def from_spec(cls, name: str, settings: ScriptedSettings | None = None, **kwargs: Any) -> ScriptedModel:
        """Registry factory: ``scripted/<name>`` with its settings (``replies=`` or ``path=``, a
        JSONL file), given as one :class:`~eviseek.models.settings.ScriptedSettings` or as
        keyword arguments."""
        if kwargs or settings is None:
            given = dict(settings) if settings is not None else {}
            settings = ScriptedSettings.parse(f"scripted/{name}", **{**given, **kwargs})
        replies: Iterable[str] | ReplyFn | None = settings.replies
        if settings.path is not None:
            replies = cls.read_jsonl(settings.path)
        if replies is None and name == "echo":
            replies = _echo
        if replies is None:
            raise ConfigError(
                f"scripted/{name} needs replies: pass replies=[...], a callable, or path=FILE.jsonl "
                "(or use scripted/echo, which describes what it was sent)"
            )
        return cls(replies, name=f"scripted/{name}", delay_s=settings.delay_s)

    @staticmethod
    def read_jsonl(path: str | Path) -> list[str]:
        """Read replies from JSONL: each line a JSON string or an object with a ``text`` field."""
        out: list[str] = []
        for lineno, value in read_jsonl(path):
            if isinstance(value, dict) and "text" in value:
                out.append(str(value["text"]))
            elif isinstance(value, str):
                out.append(value)
            else:
                raise ConfigError(f"{path}:{lineno}: expected a JSON string or an object with 'text'")
        return out

    @property
    def remaining(self) -> int | None:
        """Replies left in the script (None for a callable)."""
        return None if self._fn is not None else len(self._replies) - self._next

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        """Return the next scripted reply."""
        cfg = config or GenerateConfig()
        self.requests.append((list(messages), cfg))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self._fn is not None:
            text = self._fn(messages, cfg)
        else:
            if self._next >= len(self._replies):
                raise ScriptExhaustedError(
                    f"{self.name} ran out of replies: it was given {len(self._replies)} and "
                    f"was asked for reply {self._next + 1} (stage={cfg.stage!r})"
                )
            text = self._replies[self._next]
            self._next += 1
        prompt_words = sum(len(m.text().split()) for m in messages)
        usage = Usage(
            input_tokens=prompt_words,
            output_tokens=len(text.split()),
            reasoning_tokens=0,
            images_sent=count_images(list(messages)),
        )
        return Completion(text=text, usage=usage, latency_s=self.delay_s, model=self.name)


def _echo(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
    """Describe the request: how many messages and images, and the last user text."""
    images = count_images(list(messages))
    last = next((m.text() for m in reversed(messages) if m.role == "user"), "")
    return f"I received {len(messages)} message(s) with {images} image(s). Last text: {last[:200]}"
