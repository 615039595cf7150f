"""Build models from ``provider/model`` ids."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from eviseek._registration import Origin, Origins, caller_origin
from eviseek.errors import ConfigError, SettingError
from eviseek.models.base import Model
from eviseek.models.openai_settings import OpenAISettings
from eviseek.models.remote import REMOTE_FIELDS, RemoteSettings
from eviseek.models.settings import HFSettings, ReferenceSettings, ScriptedSettings, parse_settings

ModelFactory = Callable[..., Model]


@dataclass(frozen=True)
class Provider:
    """What a model provider is, declared once where it is registered.

    Eval and the CLI ask this, never the provider's name: whether the model sits behind a server
    (``remote``: it takes ``--base-url``/``--api-key-env``/a timeout, and a run checks it with one
    request before it starts) and which settings it accepts (``settings``: a pydantic model whose
    fields are what ``--model-arg`` may set, e.g. the image cap ``max_pixels``). A provider with
    ``settings`` gets them as one checked object, ``factory(name, settings)``; one without gets
    the keyword arguments as they are, ``factory(name, **kwargs)``.
    """

    name: str
    loader: Callable[[], ModelFactory]
    description: str = ""
    remote: bool = False
    settings: type[BaseModel] | None = None

    def accepts(self, setting: str) -> bool:
        """True when the provider declares ``setting`` among its settings."""
        return self.settings is not None and setting in self.settings.model_fields

    def default(self, setting: str) -> Any:
        """The declared default of ``setting`` (``None`` when it declares no such setting)."""
        if self.settings is None or setting not in self.settings.model_fields:
            return None
        return self.settings.model_fields[setting].get_default(call_default_factory=True)

    def parse_settings(self, model: str, kwargs: dict[str, Any]) -> BaseModel | None:
        """``kwargs`` as the provider's settings object for ``name/model``, checked once (a
        :class:`ConfigError` in one line naming what is wrong); ``None`` when it declares none."""
        if self.settings is None:
            return None
        model_id = f"{self.name}/{model}"
        parse = getattr(self.settings, "parse", None)
        if callable(parse):  # the built-ins' own parse (ProviderSettings), with their messages
            parsed: BaseModel = parse(model_id, **kwargs)
            return parsed
        return parse_settings(self.settings, model_id, kwargs)


_PROVIDERS: dict[str, Provider] = {}
_ORIGINS = Origins("model provider")


def register_provider(
    name: str,
    loader: Callable[[], ModelFactory],
    description: str = "",
    *,
    remote: bool = False,
    settings: type[BaseModel] | None = None,
    replace: bool = False,
) -> Provider:
    """Register a provider. ``loader`` returns the factory lazily so heavy imports wait.

    ``description`` is the one line ``eviseek models list`` prints for it; ``remote`` and
    ``settings`` say what it is (see :class:`Provider`). Registering a name again from another
    module raises :class:`ConfigError` unless ``replace=True`` (the run records the replacement).
    Settings that subclass :class:`~eviseek.models.remote.RemoteSettings` make the provider
    remote; a remote one with settings of its own must declare the fields the registry passes
    it (``base_url``, ``api_key``, ``timeout_s``), which is checked here rather than at the first run.
    """
    remote = remote or (settings is not None and issubclass(settings, RemoteSettings))
    if remote and settings is not None:
        missing = [f for f in REMOTE_FIELDS if f not in settings.model_fields]
        if missing:
            raise ConfigError(
                f"provider {name!r} is remote but its settings {settings.__name__} lack "
                f"{', '.join(missing)}; subclass eviseek.models.remote.RemoteSettings"
            )
    provider = Provider(name, loader, description, remote=remote, settings=settings)
    _ORIGINS.claim(name, caller_origin(), replace=replace, exists=name in _PROVIDERS)
    _PROVIDERS[name] = provider
    return provider


def provider_origin(name: str) -> Origin | None:
    """The module that registered provider ``name`` (``None``: not registered)."""
    return _ORIGINS.of(name)


def provider_descriptions() -> dict[str, str]:
    """Provider names mapped to their one-line descriptions, sorted by name."""
    return {name: _PROVIDERS[name].description for name in providers()}


def providers() -> list[str]:
    """Names of the registered providers."""
    return sorted(_PROVIDERS)


def provider_of(model_id: str) -> Provider:
    """The registered provider of ``model_id`` (``provider/name``, or an alias such as ``reference``)."""
    model_id = resolve_model_id(model_id)
    if "/" not in model_id:
        raise ConfigError(
            f"model id {model_id!r} has no provider prefix; use one of "
            f"{', '.join(p + '/<name>' for p in providers())}"
        )
    provider = model_id.split("/", 1)[0]
    if provider not in _PROVIDERS:
        raise SettingError(
            f"unknown model provider {provider!r} in {model_id!r}; known providers: {', '.join(providers())}"
        )
    return _PROVIDERS[provider]


MODEL_ALIASES: dict[str, str] = {"reference": "reference/tabletop"}
"""Short names the CLI accepts for full model ids (``--model reference``)."""


def resolve_model_id(model_id: str) -> str:
    """The full ``provider/name`` id of ``model_id`` (an alias such as ``reference`` expanded)."""
    return MODEL_ALIASES.get(model_id.strip(), model_id.strip())


def provider_kwargs(
    model_id: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout_s: float | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for :func:`get_model` from the common settings (``--base-url``,
    ``--api-key-env``, a timeout, ``--model-arg`` pairs in ``extra``): the one place they are built.

    The server settings apply to remote providers only (``Provider.remote``). The key is read from the named
    environment variable here and never printed; an unset or empty variable is a
    :class:`~eviseek.errors.ConfigError` that says how to fix it.
    """
    kwargs: dict[str, Any] = dict(extra or {})
    if not provider_of(model_id).remote:
        return kwargs
    if base_url:
        kwargs["base_url"] = base_url
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise ConfigError(
                f"environment variable {api_key_env} (from --api-key-env) is not set or empty; "
                "export it, or name another variable with --api-key-env"
            )
        kwargs["api_key"] = key
    if timeout_s:
        kwargs["timeout_s"] = timeout_s
    return kwargs


def get_model(model_id: str, **kwargs: Any) -> Model:
    """Build a model from ``provider/name`` (e.g. ``openai/gpt-4o-mini``, ``scripted/demo``).

    Keyword arguments are the provider's settings (``base_url``, ``api_key``, ``replies`` ...):
    they are checked into its settings object first (:meth:`Provider.parse_settings`), so a
    wrong one fails here, before anything heavy is imported.
    """
    provider = provider_of(model_id)
    name = resolve_model_id(model_id).split("/", 1)[1]
    settings = provider.parse_settings(name, kwargs)
    factory = provider.loader()
    if settings is None:
        return factory(name, **kwargs)
    return factory(name, settings)


def _scripted() -> ModelFactory:
    from eviseek.models.scripted import ScriptedModel

    return ScriptedModel.from_spec


register_provider(
    "scripted",
    _scripted,
    "replies from a list, a callable or a JSONL file (scripted/echo describes its input)",
    settings=ScriptedSettings,
)


def _openai() -> ModelFactory:
    from eviseek.models.openai_compat import OpenAICompatModel

    return OpenAICompatModel.from_spec


register_provider(
    "openai",
    _openai,
    "any OpenAI-compatible chat-completions server (OpenAI, vLLM, SGLang, Ollama, Gemini); "
    "--base-url, --api-key-env",
    remote=True,
    settings=OpenAISettings,
)


def _hf() -> ModelFactory:
    from eviseek.models.hf_local import HFLocalModel

    return HFLocalModel.from_spec


register_provider(
    "hf",
    _hf,
    "a local transformers vision-language model: hf/<directory or cached hub id> (extra hf)",
    settings=HFSettings,
)


def _reference() -> ModelFactory:
    from eviseek.models.reference import ReferenceModel

    return ReferenceModel.from_spec


register_provider(
    "reference",
    _reference,
    "a pixel-only reference policy, not a VLM (plays the tabletop and house benchmarks for demos "
    "and tests): reference/tabletop, or --model reference",
    settings=ReferenceSettings,
)
