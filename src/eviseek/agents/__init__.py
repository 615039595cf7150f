"""Agents: Passive, Single-model, EviSeek and the AutoTool dual-mode loop."""

from eviseek.agents.base import Agent

__all__ = ["Agent"]
