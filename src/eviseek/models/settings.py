"""The settings objects providers declare (``register_provider(..., settings=...)``).

A provider's settings are one pydantic model whose fields are what ``--model-arg KEY=VALUE``,
``--base-url``, ``--api-key-env`` and a timeout may set. The registry turns the keyword
arguments it is given into one such object, checked once, and hands it to the provider's
factory; a wrong setting is a :class:`~eviseek.errors.ConfigError` in one line that names it.

This module is light (pydantic only), so the registry can declare every built-in provider's
settings without importing the provider itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eviseek.errors import ConfigError
from eviseek.types import ChatMessage, GenerateConfig

__all__ = [
    "HFSettings",
    "ProviderSettings",
    "ReferenceSettings",
    "ScriptedSettings",
    "parse_settings",
]

S = TypeVar("S", bound=BaseModel)


def parse_settings(cls: type[S], model_id: str, kwargs: dict[str, Any]) -> S:
    """``kwargs`` as one ``cls`` object; a :class:`ConfigError` naming ``model_id`` and every
    unknown setting, or the first bad one, in one line."""
    try:
        return cls.model_validate(kwargs)
    except ValidationError as exc:
        errors = exc.errors()
        unknown = [str(e["loc"][-1]) for e in errors if e["type"] == "extra_forbidden"]
        if unknown:
            known = ", ".join(sorted(cls.model_fields))
            names = ", ".join(unknown)
            raise ConfigError(f"{model_id}: unknown setting(s) {names}; known: {known}") from None
        first = errors[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        raise ConfigError(f"{model_id}: setting {where}: {first.get('msg', exc)}") from None


class ProviderSettings(BaseModel):
    """Base of the built-in providers' settings: unknown keys are refused, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    @classmethod
    def parse(cls: type[S], model_id: str, **kwargs: Any) -> S:
        """Settings from keyword arguments (see :func:`parse_settings`)."""
        return parse_settings(cls, model_id, kwargs)


ReplyFn = Callable[[Sequence[ChatMessage], GenerateConfig], str]


class ScriptedSettings(ProviderSettings):
    """Settings of ``scripted/<name>``: where its replies come from."""

    replies: list[str] | ReplyFn | None = None
    """The replies in order, or a callable ``(messages, config) -> text``."""
    path: Path | None = None
    """A JSONL file of replies (each line a JSON string or an object with ``text``)."""
    delay_s: float = Field(0.0, ge=0)
    """Seconds each reply waits (to exercise concurrency)."""


class ReferenceSettings(ProviderSettings):
    """Settings of ``reference/<name>``, the pixel-only reference policy."""

    delay_s: float = Field(0.0, ge=0)
    """Seconds each reply waits besides its own work (to stand in for a slow model)."""


HF_DTYPES = ("auto", "float32", "bfloat16", "float16")


class HFSettings(ProviderSettings):
    """Settings of ``hf/<path-or-id>``, a local transformers model (see
    :class:`~eviseek.models.hf_local.HFLocalModel`)."""

    device: str = "cpu"
    """``cpu``, ``cuda``, ``cuda:1`` ... or ``auto`` (accelerate places the weights)."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """``auto`` is the checkpoint's own."""
    max_pixels: int | None = Field(None, ge=1)
    """Area an image is resized to before it becomes tokens (``None``: the processor's default)."""
    max_new_tokens: int = Field(512, ge=1)
    """Reply length cap when a call names none."""
    trust_remote_code: bool = False
