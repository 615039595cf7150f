"""Build agents by name: ``blind``, ``passive``, ``single-model``, ``eviseek``, ``eviseek-nav``, ``frontier``.

A spec is ``NAME`` or ``NAME:OPTIONS`` where OPTIONS are joined by ``+``; each option is a flag
(``no_demands``) or ``key=value`` (``budget=20``). Examples: ``eviseek:no_demands``,
``eviseek:adaptive+coverage``, ``single-model:min_steps=2``. Flags are the boolean settings of
the agent's config; values are checked by the config model. The spec string becomes the agent's
name, so results of variants stay apart in a run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from eviseek.agents.base import Agent
from eviseek.errors import ConfigError


def _passive() -> tuple[type[Any], type[BaseModel]]:
    from eviseek.agents.passive import PassiveAgent, PassiveConfig

    return PassiveAgent, PassiveConfig


def _single() -> tuple[type[Any], type[BaseModel]]:
    from eviseek.agents.single_model import SingleModelAgent, SingleModelConfig

    return SingleModelAgent, SingleModelConfig


def _eviseek() -> tuple[type[Any], type[BaseModel]]:
    from eviseek.agents.eviseek import EviSeekAgent, EviSeekConfig

    return EviSeekAgent, EviSeekConfig


def _blind() -> tuple[type[Any], type[BaseModel]]:
    from eviseek.agents.blind import BlindAgent, BlindConfig

    return BlindAgent, BlindConfig


def _eviseek_nav() -> tuple[type[Any], type[BaseModel]]:
    from eviseek.agents.eviseek import EviSeekNavAgent, EviSeekNavConfig

    return EviSeekNavAgent, EviSeekNavConfig


def _frontier() -> tuple[type[Any], type[BaseModel]]:
    from eviseek.agents.frontier import FrontierAgent, FrontierConfig

    return FrontierAgent, FrontierConfig


_AGENTS: dict[str, Callable[[], tuple[type[Any], type[BaseModel]]]] = {
    "passive": _passive,
    "single-model": _single,
    "eviseek": _eviseek,
    "blind": _blind,
    "eviseek-nav": _eviseek_nav,
    "frontier": _frontier,
}
_ALIASES = {
    "single_model": "single-model",
    "singlemodel": "single-model",
    "single": "single-model",
    "eviseek_nav": "eviseek-nav",
    "fine-eqa": "frontier",
}


def agent_names() -> list[str]:
    """The registered base agent names."""
    return sorted(_AGENTS)


def agent_config_class(name: str) -> type[BaseModel]:
    """The pydantic config model of a base agent name."""
    base = _resolve(name)
    return _AGENTS[base]()[1]


def _resolve(name: str) -> str:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _AGENTS:
        raise ConfigError(f"unknown agent {name!r}; known agents: {', '.join(agent_names())}")
    return key


def _value(text: str) -> Any:
    """``20`` -> 20, ``0.5`` -> 0.5, ``true`` -> True; anything else stays text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``NAME:OPT+OPT`` into the base name and config overrides."""
    base, _, opts = spec.strip().partition(":")
    name = _resolve(base)
    overrides: dict[str, Any] = {}
    cfg_cls = _AGENTS[name]()[1]
    for opt in (o.strip() for o in opts.split("+") if o.strip()):
        if "=" in opt:
            key, _, raw = opt.partition("=")
            overrides[key.strip()] = _value(raw.strip())
        else:
            key = opt.replace("-", "_")
            field = cfg_cls.model_fields.get(key)
            if field is None or field.annotation is not bool:
                flags = [k for k, f in cfg_cls.model_fields.items() if f.annotation is bool]
                raise ConfigError(
                    f"agent spec {spec!r}: {opt!r} is not a switch of {name}; switches: {', '.join(flags)} "
                    "(use key=value for other settings)"
                )
            overrides[key] = True
    return name, overrides


def make_agent(spec: str, **config: Any) -> Agent:
    """Build an agent from a name or spec, with keyword settings on top.

    >>> make_agent("eviseek:no_demands", budget=20).name
    'eviseek:no_demands'
    """
    name, overrides = parse_agent_spec(spec)
    agent_cls, cfg_cls = _AGENTS[name]()
    # A run passes one settings dict to all its agents (e.g. budget=30 reaches Passive too):
    # a setting some other agent understands is skipped here, one that no agent knows is an error.
    known_anywhere = {k for loader in _AGENTS.values() for k in loader()[1].model_fields}
    unknown = sorted(k for k in config if k not in known_anywhere)
    if unknown:
        raise ConfigError(
            f"unknown agent setting(s) {', '.join(unknown)}; "
            f"{name} accepts: {', '.join(cfg_cls.model_fields)}"
        )
    mine = {k: v for k, v in config.items() if k in cfg_cls.model_fields}
    display = spec.strip() if ":" in spec else name
    agent: Agent = agent_cls(name=display, **{**overrides, **mine})
    return agent
