"""Chat messages that interleave text and images, and the records of model calls."""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from eviseek.types.image import Image


class TextPart(BaseModel):
    """A piece of text inside a message."""

    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An image inside a message; serialised by reference only."""

    type: Literal["image"] = "image"
    image: Image
    detail: Literal["auto", "low", "high"] = "auto"


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]

Role = Literal["system", "user", "assistant", "tool"]


class ChatMessage(BaseModel):
    """One chat turn. ``content`` is a string or a list of text and image parts."""

    role: Role
    content: str | list[ContentPart]

    @classmethod
    def user(cls, *parts: str | Image) -> ChatMessage:
        """Build a user message from strings and images in order."""
        return cls(role="user", content=_parts(parts))

    @classmethod
    def system(cls, text: str) -> ChatMessage:
        """A system message."""
        return cls(role="system", content=text)

    @classmethod
    def assistant(cls, text: str) -> ChatMessage:
        """An assistant message."""
        return cls(role="assistant", content=text)

    def images(self) -> list[Image]:
        """The images in this message, in order."""
        if isinstance(self.content, str):
            return []
        return [p.image for p in self.content if isinstance(p, ImagePart)]

    def text(self) -> str:
        """The text of this message with images left out."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


def _parts(items: tuple[str | Image, ...]) -> list[TextPart | ImagePart]:
    out: list[TextPart | ImagePart] = []
    for item in items:
        if isinstance(item, Image):
            out.append(ImagePart(image=item))
        else:
            out.append(TextPart(text=item))
    return out


def count_images(messages: list[ChatMessage]) -> int:
    """How many images a list of messages carries."""
    return sum(len(m.images()) for m in messages)


class GenerateConfig(BaseModel):
    """Sampling and request settings for one model call."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    json_mode: bool = False
    stop: list[str] | None = None
    timeout_s: float | None = None
    stage: str | None = None
    """Which role asked: a :class:`~eviseek.types.Stage` for the built-in agents (``plan``, ``seek``,
    ``keep``, ``answer``...), any string for a plugin's. Recorded, and readable by non-neural
    reference models. Real providers do not send it."""
    response_schema: dict[str, Any] | None = None
    """JSON schema of the expected reply, for the same readers as ``stage``."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Structured request metadata that real providers ignore."""

    def merged(self, other: GenerateConfig | None) -> GenerateConfig:
        """This config with every field that ``other`` sets explicitly taking precedence."""
        if other is None:
            return self
        data = self.model_dump()
        data.update(other.model_dump(exclude_unset=True))
        return GenerateConfig.model_validate(data)


def total_tokens(input_tokens: int | None, output_tokens: int | None, reasoning: int | None) -> int | None:
    """Input + output + reasoning tokens; None when input or output is unknown (no reasoning
    reported counts 0: most servers have none)."""
    if input_tokens is None or output_tokens is None:
        return None
    return input_tokens + output_tokens + (reasoning or 0)


class Usage(BaseModel):
    """Token and image counts of one call. ``None`` means the server did not report it."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    """Output tokens other than reasoning (providers that count reasoning inside their completion
    tokens have it taken out, so it is never counted twice)."""
    reasoning_tokens: int | None = None
    """Reasoning ("thinking") tokens the server reported apart from the visible output."""
    images_sent: int = 0

    @property
    def total_tokens(self) -> int | None:
        """Input + output + reasoning tokens, the EviSeek paper's cost (§5.4); None if unknown."""
        return total_tokens(self.input_tokens, self.output_tokens, self.reasoning_tokens)

    def __add__(self, other: Usage) -> Usage:
        def add(a: int | None, b: int | None) -> int | None:
            if a is None and b is None:
                return None
            return (a or 0) + (b or 0)

        return Usage(
            input_tokens=add(self.input_tokens, other.input_tokens),
            output_tokens=add(self.output_tokens, other.output_tokens),
            reasoning_tokens=add(self.reasoning_tokens, other.reasoning_tokens),
            images_sent=self.images_sent + other.images_sent,
        )


class Completion(BaseModel):
    """What ``Model.generate`` returns."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str | None = None
    notes: list[str] = Field(default_factory=list)
    """Things the provider did that the caller should know (a dropped parameter, retries)."""


class ModelCall(BaseModel):
    """A recorded model call: what was sent (images by reference), what came back, the cost."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    stage: str | None = None
    model: str = ""
    messages: list[ChatMessage] = Field(default_factory=list)
    config: GenerateConfig = Field(default_factory=GenerateConfig)
    output: str = ""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    started_at: float = Field(default_factory=time.time)
    error: str | None = None
    notes: list[str] = Field(default_factory=list)
