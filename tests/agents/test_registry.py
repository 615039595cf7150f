"""Building agents by name and spec, as the evaluation CLI does."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from pydantic import BaseModel

from eviseek.agents import (
    agent_config_class,
    agent_names,
    make_agent,
    parse_agent_spec,
    register_agent,
    registry,
)
from eviseek.errors import ConfigError


@pytest.fixture(autouse=True)
def builtins_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the built-in agents only (a plugin another test imported registers more)."""
    monkeypatch.setattr(registry, "_AGENTS", dict(registry._BUILTINS))


def test_names_and_variants() -> None:
    assert agent_names() == [
        "autotool",
        "blind",
        "eviseek",
        "eviseek-nav",
        "frontier",
        "passive",
        "single-model",
    ]
    assert make_agent("fine-eqa").name == "frontier" and make_agent("eviseek_nav").name == "eviseek-nav"
    assert make_agent("single_model").name == "single-model"
    agent = make_agent("eviseek:no_demands+adaptive+budget=12", frame_capacity=8)
    assert agent.name == "eviseek:no_demands+adaptive+budget=12"
    cfg = agent.config  # type: ignore[attr-defined]
    assert (cfg.no_demands, cfg.adaptive, cfg.budget, cfg.frame_capacity) == (True, True, 12, 8)
    assert parse_agent_spec("eviseek:coverage+max_replans=1") == (
        "eviseek",
        {"coverage": True, "max_replans": 1},
    )
    assert "confidence_threshold" in agent_config_class("single-model").model_fields


def test_run_wide_settings_reach_only_the_agents_that_have_them() -> None:
    # The harness passes budget to every agent; Passive has none and ignores it.
    assert make_agent("passive", budget=30).name == "passive"
    assert make_agent("single-model", budget=7).config.budget == 7  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "kwargs", "message"),
    [
        (
            "robot",
            {},
            "unknown agent 'robot'; known agents: autotool, blind, eviseek, eviseek-nav, frontier, "
            "passive, single-model",
        ),
        ("eviseek:fast", {}, "'fast' is not a switch of eviseek"),
        ("eviseek:budget=-1", {}, "budget"),
        ("passive", {"temprature": 0.1}, "unknown agent setting"),
        ("autotool:max_turns=0", {}, "max_turns"),
        ("autotool:force_mode=sometimes", {}, "force_mode"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        make_agent(spec, **kwargs)


def test_importing_agents_stays_light() -> None:
    heavy = ("torch", "pybullet", "jinja2")
    code = f"import sys, eviseek.agents; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_autotool_is_built_by_name_with_its_settings() -> None:
    from eviseek.agents.autotool import AutoToolAgent

    agent = make_agent("autotool:max_turns=3+force_mode=tool_off", budget=30, temperature=0.7)
    assert isinstance(agent, AutoToolAgent)
    assert agent.name == "autotool:max_turns=3+force_mode=tool_off"
    assert (agent.max_turns, agent.force_mode, agent.generate.temperature) == (3, "tool_off", 0.7)
    assert make_agent("autotool").name == "autotool"


class _EchoConfig(BaseModel):
    loud: bool = False
    budget: int = 5


class _EchoAgent:
    def __init__(self, *, name: str, **settings: Any) -> None:
        self.name = name
        self.config = _EchoConfig(**settings)

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def test_plugins_register_with_or_without_a_config() -> None:
    register_agent("echo", _EchoAgent, config=_EchoConfig)
    agent = make_agent("echo:loud", budget=9, frame_capacity=4)  # frame_capacity is EviSeek's
    assert agent.name == "echo:loud" and agent.config == _EchoConfig(loud=True, budget=9)  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="'quiet' is not a switch of echo"):
        make_agent("echo:quiet")

    seen: dict[str, Any] = {}
    register_agent("bare", lambda **kw: seen.update(kw) or _EchoAgent(name="bare"))
    make_agent("bare", budget=3, anything=1)  # no config: every run-wide setting goes through
    assert seen == {"budget": 3, "anything": 1}
    with pytest.raises(ConfigError, match="takes no options"):
        make_agent("bare:x")
    assert {"echo", "bare"} <= set(agent_names())

    with pytest.raises(ConfigError, match="built-in agent"):
        register_agent("eviseek", _EchoAgent, config=_EchoConfig)
    with pytest.raises(ConfigError, match="no ':' or ','"):
        register_agent("a:b", _EchoAgent)
