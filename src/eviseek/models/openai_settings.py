"""The typed settings of the ``openai/`` provider: one object, checked once.

:class:`OpenAISettings` is what ``openai/<model>`` accepts as keyword arguments (``--model-arg``
pairs, ``--base-url``...): the settings of every remote provider
(:class:`~eviseek.models.remote.RemoteSettings`, with the retry policy
:class:`~eviseek.models.retry.RetryPolicy`, whose defaults are the only copy) and the image
cap (``max_pixels``, default :data:`~eviseek.types.image.DEFAULT_MAX_PIXELS`). The retry
fields may be given flat (``max_retries=3``) as before, or as ``retry=RetryPolicy(...)``.

This module is light (pydantic only), so the registry can declare it without importing the
OpenAI client.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from eviseek.errors import ConfigError
from eviseek.models.openai_wire import REASONING_EFFORTS
from eviseek.models.remote import RETRY_FIELDS, RemoteSettings
from eviseek.types import GenerateConfig
from eviseek.types.image import DEFAULT_MAX_PIXELS

__all__ = ["RETRY_FIELDS", "OpenAISettings"]


class OpenAISettings(RemoteSettings):
    """Settings of one ``openai/<model>`` (see :class:`~eviseek.models.openai_compat.OpenAICompatModel`):
    the remote ones (:class:`~eviseek.models.remote.RemoteSettings`: URL, key, timeout, retry
    policy, concurrency) and the wire format's own.

    Build it with :meth:`parse` for the provider's one-line errors.
    """

    max_pixels: int | None = Field(DEFAULT_MAX_PIXELS, ge=1)
    """Pixel budget per image sent (``None``: send as is)."""
    image_format: str = "png"
    jpeg_quality: int = Field(90, ge=1, le=100)
    default_config: GenerateConfig | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = Field(None, ge=0)
    api: str = "chat"
    transport: str = "auto"
    """How chat requests travel. ``auto`` (ours, for throughput with many episodes in flight):
    to a plain ``http://`` server with no proxy set, through the lean HTTP/1.1 client of
    :mod:`eviseek.models.http1`; everything else through the openai client. ``openai``: always
    through the openai client (``--model-arg transport=openai``), e.g. for a server or gateway
    the lean client does not read."""

    @classmethod
    def parse(cls, model_id: str, **kwargs: Any) -> OpenAISettings:  # type: ignore[override]
        """Settings from keyword arguments; :class:`ConfigError` in one line naming ``model_id``
        (``openai/<model>``) and what is wrong."""
        settings = super().parse(model_id, **kwargs)
        if settings.reasoning_effort is not None and settings.reasoning_effort not in REASONING_EFFORTS:
            raise ConfigError(
                f"reasoning_effort {settings.reasoning_effort!r} is not one of {', '.join(REASONING_EFFORTS)}"
            )
        if settings.api not in ("chat", "responses"):
            raise ConfigError(f"api {settings.api!r} is not supported; use 'chat' or 'responses'")
        if settings.transport not in ("auto", "openai"):
            raise ConfigError(
                f"transport {settings.transport!r} is not supported; use 'auto' (plain-http chat servers get "
                "the lean HTTP client) or 'openai' (always the openai client)"
            )
        fmt = settings.image_format.lower().replace("jpg", "jpeg")
        if fmt not in ("png", "jpeg"):
            raise ConfigError(f"image_format {settings.image_format!r} is not supported; use 'png' or 'jpeg'")
        return settings.model_copy(update={"image_format": fmt})
