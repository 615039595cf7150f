"""Stand-in for ``habitat_sim.agent``: agent and action configuration."""

from __future__ import annotations

from typing import Any


class ActuationSpec:
    def __init__(self, amount: float = 0.25) -> None:
        self.amount = amount


class ActionSpec:
    def __init__(self, name: str, actuation: ActuationSpec | None = None) -> None:
        self.name = name
        self.actuation = actuation or ActuationSpec()


class AgentConfiguration:
    def __init__(self) -> None:
        self.sensor_specifications: list[Any] = []
        self.action_space: dict[str, ActionSpec] = {}
