"""The one registry of agents: the built-ins (``blind``, ``passive``, ``single-model``, ``eviseek``,
``eviseek-nav``, ``frontier``, ``autotool``) and plugins added with :func:`register_agent`.

A spec is ``NAME`` or ``NAME:OPTIONS`` where OPTIONS are joined by ``+``; each option is a flag
(``no_demands``) or ``key=value`` (``budget=20``). Examples: ``eviseek:no_demands``,
``eviseek:adaptive+coverage``, ``single-model:min_steps=2``. Flags are the boolean settings of
the agent's config; values are checked by the config model. The spec string becomes the agent's
name, so results of variants stay apart in a run.

Adding an agent: write its class (it satisfies :class:`~eviseek.agents.base.Agent` and takes
``name=`` plus the fields of a pydantic config model as keywords), then add one line to
:data:`_BUILTINS` below, or, from a plugin, call ``register_agent("mine", MyAgent, config=MyConfig)``.
Built-ins are listed as lazy loaders so that importing :mod:`eviseek.agents` stays light.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from eviseek._registration import Origin, Origins, caller_origin
from eviseek.agents.base import Agent
from eviseek.errors import ConfigError, SettingError

AgentFactory = Callable[..., Agent]
"""Builds an agent from keyword settings (see :class:`AgentEntry` for which keywords)."""


@dataclass(frozen=True)
class AgentEntry:
    """How to build one registered agent.

    With a ``config`` model, ``factory`` is called as ``factory(name=SPEC, **settings)`` where
    ``settings`` are the spec's options plus the run-wide settings that are fields of ``config``
    (so ``budget=30`` given to every agent of a run reaches only those that have a budget).
    Without one, ``factory(**settings)`` receives every run-wide setting and specs take no options.
    """

    factory: AgentFactory
    config: type[BaseModel] | None = None
    envs: frozenset[str] | None = None
    """The environment ids the agent was built for (``None``: any). A run that gives it a
    question of another environment is refused before it starts, not run to a meaningless score."""


def _builtin(module: str, agent: str, config: str) -> Callable[[], AgentEntry]:
    """A loader that imports ``module`` only when the agent is first built."""

    def load() -> AgentEntry:
        mod = importlib.import_module(module)
        return AgentEntry(factory=getattr(mod, agent), config=getattr(mod, config))

    return load


def _autotool() -> AgentEntry:
    # Lazy, so the AutoTool prompts and parser load only when the agent is first built.
    from eviseek.agents.autotool import AutoToolConfig, autotool_agent

    # AutoTool's protocol is a zoom-in tool on one image; it has no moves for a 3D scene. The id
    # is written out: agents reach environments only through eviseek.envs.base (the contracts).
    return AgentEntry(factory=autotool_agent, config=AutoToolConfig, envs=frozenset({"eviseek/ImageZoom-v0"}))


_BUILTINS: dict[str, Callable[[], AgentEntry]] = {
    "passive": _builtin("eviseek.agents.passive", "PassiveAgent", "PassiveConfig"),
    "single-model": _builtin("eviseek.agents.single_model", "SingleModelAgent", "SingleModelConfig"),
    "eviseek": _builtin("eviseek.agents.eviseek", "EviSeekAgent", "EviSeekConfig"),
    "blind": _builtin("eviseek.agents.blind", "BlindAgent", "BlindConfig"),
    "eviseek-nav": _builtin("eviseek.agents.eviseek", "EviSeekNavAgent", "EviSeekNavConfig"),
    "frontier": _builtin("eviseek.agents.frontier", "FrontierAgent", "FrontierConfig"),
    "autotool": _autotool,
}
_AGENTS: dict[str, Callable[[], AgentEntry]] = dict(_BUILTINS)
_ORIGINS = Origins("agent")
_BUILTIN_ORIGIN = Origin(__name__, os.path.realpath(__file__))
for _name in _BUILTINS:
    _ORIGINS.claim(_name, _BUILTIN_ORIGIN, replace=False, exists=False)
_ALIASES = {
    "single_model": "single-model",
    "singlemodel": "single-model",
    "single": "single-model",
    "eviseek_nav": "eviseek-nav",
    "fine-eqa": "frontier",
}


def register_agent(
    name: str, factory: AgentFactory, *, config: type[BaseModel] | None = None, replace: bool = False
) -> None:
    """Make ``--agents NAME`` (and :func:`make_agent`) build agents with ``factory``.

    Pass the agent's pydantic ``config`` model to get spec options (``NAME:flag+key=value``) and
    per-agent filtering of run-wide settings; see :class:`AgentEntry`. A module registering a name
    again replaces its own entry (a plugin file may be imported twice); replacing an agent another
    module registered (a built-in among them) needs ``replace=True``, and the run records it.
    """
    key = name.strip().lower()
    if not key or ":" in key or "," in key:
        raise ConfigError(f"agent name {name!r} must be non-empty and contain no ':' or ','")
    origin = caller_origin()
    if key in _BUILTINS and not replace and _ORIGINS.of(key) == _BUILTIN_ORIGIN:
        raise ConfigError(f"{key!r} is a built-in agent; pick another name or pass replace=True")
    _ORIGINS.claim(key, origin, replace=replace, exists=key in _AGENTS)
    entry = AgentEntry(factory=factory, config=config)
    _AGENTS[key] = lambda: entry


PRESETS: dict[str, dict[str, tuple[dict[str, Any], str]]] = {
    "eviseek": {
        "paper": (
            {"retention": "split", "guarded_answer": False, "look_up": False},
            "the paper's ESI-Bench EviSeek (Tables 1, 5, 9): its stage prompts' split retention (app. J), "
            "no guarded answer context and no LOOK_UP intent (both ours)",
        ),
        "paper_coverage": (
            {"retention": "split", "guarded_answer": False, "look_up": False, "coverage_control": True},
            "eviseek:paper with demand-coverage checks for subtask completion, replanning and stopping "
            "(Table 10 / app. H.1, app. I)",
        ),
    },
    "eviseek-nav": {
        "paper": (
            {
                "retention": "split",
                "guarded_answer": False,
                "look_up": False,
                "memory_scope": "subtask",
                "memory_lines": 8,
                "coverage_views": "new",
                "coverage_walk": False,
                "skip_repeated_failures": False,
                "max_decisions_per_subtask": 6,
                "max_replans": 2,
            },
            "the paper's navigation variant (section 5.5, app. F): its stage prompts' split retention, "
            "a working memory per subtask (section 4.3), coverage checks on newly retained views that "
            "see neither the seeker's memory nor the pose; "
            "every setting of ours (guarded answer, LOOK_UP, skipped repeats of a failed move, an "
            "episode-long memory, checks over every retained view, the larger subtask and replan "
            "allowances) back to EviSeekConfig's defaults; the 120-step budget and coverage-driven "
            "control stay",
        ),
    },
    "passive": {
        "paper": (
            {"reference_images": False},
            "the paper's Passive: one scene image and the question (app. A, 'Passive input protocol')",
        ),
    },
}
"""Named option sets per agent (``eviseek:paper``): the settings, and where they come from."""


def agent_origin(name: str) -> Origin | None:
    """The module that registered agent ``name`` (``None``: not registered)."""
    return _ORIGINS.of(name.strip().lower())


def agent_names() -> list[str]:
    """The registered base agent names."""
    return sorted(_AGENTS)


def agent_entry(name: str) -> AgentEntry:
    """The registry entry of a base agent name (aliases such as ``single_model`` accepted)."""
    return _AGENTS[_resolve(name)]()


def agent_config_class(name: str) -> type[BaseModel]:
    """The pydantic config model of a base agent name."""
    entry = agent_entry(name)
    if entry.config is None:
        raise ConfigError(f"agent {name!r} was registered without a config model")
    return entry.config


def _resolve(name: str) -> str:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _AGENTS:
        raise SettingError(f"unknown agent {name!r}; known agents: {', '.join(agent_names())}")
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
    options = [o.strip() for o in opts.split("+") if o.strip()]
    cfg_cls = _AGENTS[name]().config
    if cfg_cls is None:
        if options:
            raise SettingError(
                f"agent spec {spec!r}: {name} was registered without a config and takes no options"
            )
        return name, {}
    overrides: dict[str, Any] = {}
    presets = PRESETS.get(name, {})
    for opt in options:
        if opt in presets:
            overrides.update(presets[opt][0])
            continue
        if "=" in opt:
            key, _, raw = opt.partition("=")
            overrides[key.strip()] = _value(raw.strip())
        else:
            key = opt.replace("-", "_")
            field = cfg_cls.model_fields.get(key)
            if field is None or field.annotation is not bool:
                flags = [k for k, f in cfg_cls.model_fields.items() if f.annotation is bool]
                named = f"; presets: {', '.join(presets)}" if presets else ""
                raise SettingError(
                    f"agent spec {spec!r}: {opt!r} is not a switch of {name}; switches: {', '.join(flags)}"
                    f"{named} (use key=value for other settings)"
                )
            overrides[key] = True
    return name, overrides


def check_agent_envs(specs: Iterable[str], env_ids: Iterable[str]) -> None:
    """Refuse (:class:`SettingError`) an agent given questions of an environment it was not built
    for (see :attr:`AgentEntry.envs`), naming the agent, the environment and what it takes."""
    needed = sorted(set(env_ids))
    for spec in specs:
        name, _ = parse_agent_spec(spec)
        allowed = _AGENTS[name]().envs
        wrong = [e for e in needed if allowed is not None and e not in allowed]
        if wrong:
            raise SettingError(
                f"agent {spec!r} was built for {', '.join(sorted(allowed or ()))}, not {wrong[0]}; "
                "give it a dataset of that environment or pick another agent"
            )


def make_agent(spec: str, **settings: Any) -> Agent:
    """Build an agent from a name or spec, with keyword settings on top.

    >>> make_agent("eviseek:no_demands", budget=20).name
    'eviseek:no_demands'
    """
    name, overrides = parse_agent_spec(spec)
    entry = _AGENTS[name]()
    if entry.config is None:
        plugin: Agent = entry.factory(**settings)
        return plugin
    cfg_cls = entry.config
    # A run passes one settings dict to all its agents (e.g. budget=30 reaches Passive too):
    # a setting some other agent understands is skipped here, one that no agent knows is an error.
    configs = [e.config for e in (load() for load in _AGENTS.values()) if e.config is not None]
    known_anywhere = {k for cfg in configs for k in cfg.model_fields}
    unknown = sorted(k for k in settings if k not in known_anywhere)
    if unknown:
        raise SettingError(
            f"unknown agent setting(s) {', '.join(unknown)}; "
            f"{name} accepts: {', '.join(cfg_cls.model_fields)}"
        )
    mine = {**overrides, **{k: v for k, v in settings.items() if k in cfg_cls.model_fields}}
    from eviseek.agents.common import build_config  # lazy: it imports the prompt renderer

    build_config(cfg_cls, None, mine)  # a bad value fails here, with the setting's name
    display = spec.strip() if ":" in spec else name
    agent: Agent = entry.factory(name=display, **mine)
    return agent
