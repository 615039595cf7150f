"""Building agents by name and spec, as the evaluation CLI does."""

from __future__ import annotations

import subprocess
import sys

import pytest

from eviseek.agents import agent_config_class, agent_names, make_agent, parse_agent_spec
from eviseek.errors import ConfigError


def test_names_and_variants() -> None:
    assert agent_names() == ["blind", "eviseek", "eviseek-nav", "frontier", "passive", "single-model"]
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
            "unknown agent 'robot'; known agents: blind, eviseek, eviseek-nav, frontier, passive, "
            "single-model",
        ),
        ("eviseek:fast", {}, "'fast' is not a switch of eviseek"),
        ("eviseek:budget=-1", {}, "budget"),
        ("passive", {"temprature": 0.1}, "unknown agent setting"),
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
