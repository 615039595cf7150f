"""Agents: Passive, Single-model, EviSeek and the AutoTool dual-mode loop.

Build one by name with :func:`make_agent` (``"passive"``, ``"single-model"``, ``"eviseek"``,
``"autotool"``, or a variant such as ``"eviseek:no_demands"``); plugins add their own with
:func:`register_agent`. Importing this package is light: no simulator,
no torch.
"""

from eviseek.agents.base import Agent
from eviseek.agents.registry import (
    AgentEntry,
    agent_config_class,
    agent_names,
    make_agent,
    parse_agent_spec,
    register_agent,
)

__all__ = [
    "Agent",
    "AgentEntry",
    "agent_config_class",
    "agent_names",
    "make_agent",
    "parse_agent_spec",
    "register_agent",
    "replay_answer",
]


def __getattr__(name: str) -> object:
    # Board replay lives with EviSeek; import it on first use to keep this package light.
    if name == "replay_answer":
        from eviseek.agents.eviseek.replay import replay_answer

        return replay_answer
    raise AttributeError(name)
