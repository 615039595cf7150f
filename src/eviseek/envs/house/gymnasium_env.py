"""A Gymnasium wrapper of the house environment, registered as ``eviseek/House-v0``.

Importing this module registers the id with Gymnasium. Actions are a fixed ``Discrete`` space:

- slots 0-2: ``move_forward``, ``turn_left``, ``turn_right`` (the paper's Table 7); slot 3: ``stop``;
- the next :data:`ANSWER_SLOTS` slots: answers (the question's options in order; the integers
  0, 1, 2... for counting; for a room-sequence question, every doorway route between the two
  rooms it names). Choosing one ends the episode with reward equal to the answer's score.

Slots that mean nothing for the current question are masked in ``info["action_mask"]``;
choosing one anyway costs a step and does nothing. Observations are RGB frames (``uint8``).
"""

from __future__ import annotations

from typing import Any

from eviseek.envs.budget import NAVIGATION_BUDGET
from eviseek.envs.house.env import NAV_ACTIONS, HouseEnv
from eviseek.envs.house.questions import ENV_ID
from eviseek.envs.house.spec import HouseSpec
from eviseek.envs.slot_gym import ANSWER_SLOTS, Slot, SlotGymEnv, answer_slots, gym
from eviseek.types import Action, Observation, Question

N_ACTIONS = len(NAV_ACTIONS) + 1 + ANSWER_SLOTS


def room_routes(spec: HouseSpec, start: str, goal: str, limit: int = ANSWER_SLOTS) -> list[str]:
    """Every doorway route (no room twice) from ``start`` to ``goal``, as ``a | b | c``, shortest first."""
    return [" | ".join(r) for r in spec.routes(start, goal, limit)]


class HouseGymEnv(SlotGymEnv):
    """Gymnasium view of :class:`~eviseek.envs.house.env.HouseEnv`."""

    n_actions = N_ACTIONS

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        width: int = 320,
        height: int = 240,
        max_steps: int = NAVIGATION_BUDGET,
        kinds: list[str] | None = None,
        questions: list[Question] | None = None,
    ) -> None:
        """``questions``: draw episodes from these (by seed) instead of generating new ones."""
        self._setup(render_mode, width, height, questions)
        self.inner = HouseEnv(width=width, height=height, max_steps=max_steps, kinds=kinds)
        self.kinds = kinds

    def _answer_list(self) -> list[str]:
        q = self._question
        assert q is not None
        c = q.contract
        if c.kind == "sequence":
            seq = q.metadata.get("room_sequence") or []
            if len(seq) >= 2:
                return room_routes(HouseSpec.from_question(q.scene), seq[0], seq[-1])
            return []
        if c.options:
            return list(c.options)
        if c.kind == "integer":
            return [str(i) for i in range(ANSWER_SLOTS)]
        return []

    def _slot_list(self) -> list[Slot]:
        slots: list[Slot] = [("act", Action(name=n)) for n in [*NAV_ACTIONS, "stop"]]
        return slots + answer_slots(self._answer_list())

    def _reset_drawn(self, draw: int) -> tuple[Observation, dict[str, Any]]:
        return self.inner.reset(seed=draw)  # type: ignore[no-any-return]


def register_gymnasium() -> None:
    """Register ``eviseek/House-v0`` with Gymnasium (idempotent)."""
    if ENV_ID not in gym.envs.registry:
        gym.register(id=ENV_ID, entry_point=f"{__name__}:HouseGymEnv", max_episode_steps=None)


register_gymnasium()
