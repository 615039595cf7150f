"""Build models from ``provider/model`` ids."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eviseek.errors import ConfigError
from eviseek.models.base import Model

ModelFactory = Callable[..., Model]

_PROVIDERS: dict[str, Callable[[], ModelFactory]] = {}


def register_provider(name: str, loader: Callable[[], ModelFactory]) -> None:
    """Register a provider. ``loader`` returns the factory lazily so heavy imports wait."""
    _PROVIDERS[name] = loader


def providers() -> list[str]:
    """Names of the registered providers."""
    return sorted(_PROVIDERS)


def get_model(model_id: str, **kwargs: Any) -> Model:
    """Build a model from ``provider/name`` (e.g. ``openai/gpt-4o-mini``, ``scripted/demo``).

    Keyword arguments go to the provider (``base_url``, ``api_key``, ``replies`` ...).
    """
    if "/" not in model_id:
        raise ConfigError(
            f"model id {model_id!r} has no provider prefix; use one of "
            f"{', '.join(p + '/<name>' for p in providers())}"
        )
    provider, name = model_id.split("/", 1)
    if provider not in _PROVIDERS:
        raise ConfigError(
            f"unknown model provider {provider!r} in {model_id!r}; known providers: {', '.join(providers())}"
        )
    factory = _PROVIDERS[provider]()
    return factory(name, **kwargs)


def _scripted() -> ModelFactory:
    from eviseek.models.scripted import ScriptedModel

    return ScriptedModel.from_spec


register_provider("scripted", _scripted)
