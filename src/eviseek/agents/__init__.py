"""Agents: Passive, Single-model, EviSeek and the AutoTool dual-mode loop.

Build one by name with :func:`make_agent` (``"passive"``, ``"single-model"``, ``"eviseek"``,
or a variant such as ``"eviseek:no_demands"``). Importing this package is light: no simulator,
no torch.
"""

from eviseek.agents.base import Agent
from eviseek.agents.registry import agent_config_class, agent_names, make_agent, parse_agent_spec

__all__ = ["Agent", "agent_config_class", "agent_names", "make_agent", "parse_agent_spec", "replay_answer"]


def __getattr__(name: str) -> object:
    # Board replay lives with EviSeek; import it on first use to keep this package light.
    if name == "replay_answer":
        from eviseek.agents.eviseek.replay import replay_answer

        return replay_answer
    raise AttributeError(name)
