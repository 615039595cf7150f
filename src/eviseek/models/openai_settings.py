"""The typed settings of the ``openai/`` provider: one object, checked once.

:class:`OpenAISettings` is what ``openai/<model>`` accepts as keyword arguments (``--model-arg``
pairs, ``--base-url``...). It embeds the retry policy (:class:`~eviseek.models.retry.RetryPolicy`,
whose defaults are the only copy) and the image cap (``max_pixels``, default
:data:`~eviseek.types.image.DEFAULT_MAX_PIXELS`). The retry fields may be given flat
(``max_retries=3``) as before, or as ``retry=RetryPolicy(...)``.

This module is light (pydantic only), so the registry can declare it without importing the
OpenAI client.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import Field, ValidationError, model_validator

from eviseek.errors import ConfigError
from eviseek.models.openai_wire import REASONING_EFFORTS
from eviseek.models.retry import RetryPolicy
from eviseek.models.settings import ProviderSettings
from eviseek.types import GenerateConfig
from eviseek.types.image import DEFAULT_MAX_PIXELS

__all__ = ["RETRY_FIELDS", "OpenAISettings"]

RETRY_FIELDS = tuple(f.name for f in dataclasses.fields(RetryPolicy))
"""Settings given flat that belong to the embedded :class:`RetryPolicy`."""


class OpenAISettings(ProviderSettings):
    """Settings of one ``openai/<model>`` (see :class:`~eviseek.models.openai_compat.OpenAICompatModel`).

    Build it with :meth:`parse` for the provider's one-line errors.
    """

    base_url: str | None = None
    """The server's URL ending in ``/v1``; default ``$OPENAI_BASE_URL`` or OpenAI's."""
    api_key: str | None = Field(None, repr=False)
    """The key; default ``$OPENAI_API_KEY`` (never printed)."""
    timeout_s: float = Field(120.0, gt=0)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    max_concurrency: int = Field(16, ge=1)
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

    @model_validator(mode="before")
    @classmethod
    def _lift_retry(cls, data: Any) -> Any:
        """Flat retry settings (``max_retries=3``) go into ``retry``, over its defaults."""
        if not isinstance(data, dict) or not any(k in data for k in RETRY_FIELDS):
            return data
        data = dict(data)
        given = {k: data.pop(k) for k in RETRY_FIELDS if k in data}
        base = data.get("retry") or RetryPolicy()
        if isinstance(base, dict):
            base = RetryPolicy(**base)
        data["retry"] = dataclasses.replace(base, **given)
        return data

    def out_of_range(self) -> list[str]:
        """Names of retry settings out of range (the dataclass itself checks nothing)."""
        r = self.retry
        checks = {
            "max_retries": r.max_retries >= 0,
            "max_connect_retries": r.max_connect_retries >= 0,
            "backoff_base_s": r.backoff_base_s >= 0,
            "backoff_max_s": r.backoff_max_s >= 0,
            "retry_after_cap_s": r.retry_after_cap_s >= 0,
            "max_throttled_s": r.max_throttled_s >= 0,
        }
        return [name for name, ok in checks.items() if not ok]

    @classmethod
    def parse(cls, model_id: str, **kwargs: Any) -> OpenAISettings:  # type: ignore[override]
        """Settings from keyword arguments; :class:`ConfigError` in one line naming ``model_id``
        (``openai/<model>``) and what is wrong."""
        try:
            settings = cls.model_validate(kwargs)
        except (ValidationError, TypeError) as exc:
            errors = exc.errors() if isinstance(exc, ValidationError) else []
            unknown = [str(e["loc"][-1]) for e in errors if e["type"] == "extra_forbidden"]
            if unknown:
                known = sorted([*cls.model_fields, *RETRY_FIELDS])
                raise ConfigError(
                    f"{model_id}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(known)}"
                ) from None
            raise _out_of_range(model_id, [str(e["loc"][-1]) for e in errors] or [str(exc)]) from None
        bad = settings.out_of_range()
        if bad:
            raise _out_of_range(model_id, bad)
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


def _out_of_range(model_id: str, names: list[str]) -> ConfigError:
    return ConfigError(
        f"{model_id}: out-of-range setting(s) {', '.join(names)}; timeouts and the pixel "
        "budget must be positive, retries and delays non-negative, jpeg_quality in 1..100"
    )
