"""A Gymnasium wrapper of the tabletop environment, registered as ``eviseek/Tabletop-v0``.

``import eviseek`` registers the id with Gymnasium (without loading PyBullet), so either of
these works::

    import eviseek
    env = gymnasium.make("eviseek/Tabletop-v0")

    env = gymnasium.make("eviseek.envs.tabletop.gymnasium_env:eviseek/Tabletop-v0")

Actions are a fixed ``Discrete`` space over a flattened list of slots, so the space does not
change from question to question:

- slots 0-9: the ten camera primitives; slot 10: ``stop``;
- the next :data:`ANSWER_SLOTS` slots: answers (the question's options in order, or the integers
  0, 1, 2... for counting questions); choosing one ends the episode with reward equal to the
  answer's score;
- the last :data:`MANIPULATION_SLOTS` slots: the question's manipulation actions with every legal
  argument combination, in a fixed order.

Slots that mean nothing for the current question are masked out in ``info["action_mask"]``;
choosing one anyway costs a step and has no effect. ``info["action_names"]`` lists the meaning of
every valid slot. Observations are the RGB frames as ``uint8`` arrays.
"""

from __future__ import annotations

import itertools
from typing import Any

from eviseek.envs.budget import TABLETOP_BUDGET
from eviseek.envs.slot_gym import ANSWER_SLOTS, Slot, SlotGymEnv, answer_slots
from eviseek.envs.tabletop.camera import CAMERA_ACTIONS
from eviseek.envs.tabletop.env import TabletopEnv
from eviseek.types import Action, ActionSpec, Observation, Question

MANIPULATION_SLOTS = 64
N_ACTIONS = len(CAMERA_ACTIONS) + 1 + ANSWER_SLOTS + MANIPULATION_SLOTS


def _expand(spec: ActionSpec) -> list[Action]:
    """Every concrete action of a manipulation spec (one per legal argument combination)."""
    values = [spec.choices.get(p, []) for p in spec.params]
    out = []
    for combo in itertools.product(*values):
        args = dict(zip(spec.params, combo, strict=True))
        if len(set(combo)) < len(combo):
            continue  # an object on itself is never useful
        out.append(Action(name=spec.name, args=args))
    return out


class TabletopGymEnv(SlotGymEnv):
    """Gymnasium view of :class:`~eviseek.envs.tabletop.env.TabletopEnv`."""

    n_actions = N_ACTIONS

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        width: int = 320,
        height: int = 240,
        max_steps: int = TABLETOP_BUDGET,
        subcategories: list[str] | None = None,
        questions: list[Question] | None = None,
    ) -> None:
        """``questions``: draw episodes from these (by seed) instead of generating new ones."""
        self._setup(render_mode, width, height, questions)
        self.inner = TabletopEnv(width=width, height=height, max_steps=max_steps, subcategories=subcategories)
        self.subcategories = subcategories

    def _slot_list(self) -> list[Slot]:
        assert self._question is not None
        slots: list[Slot] = [("act", Action(name=n)) for n in CAMERA_ACTIONS]
        slots.append(("act", Action(name="stop")))
        contract = self._question.contract
        slots += answer_slots(
            list(contract.options) if contract.options else [str(i) for i in range(ANSWER_SLOTS)]
        )
        manip: list[Action] = []
        for spec in self.inner.legal_actions():
            if spec.kind == "manipulation" or (spec.kind != "camera" and spec.params):
                manip += _expand(spec)
        manip = manip[:MANIPULATION_SLOTS]
        slots += [("act", a) for a in manip] + [None] * (MANIPULATION_SLOTS - len(manip))
        return slots

    def _reset_drawn(self, draw: int) -> tuple[Observation, dict[str, Any]]:
        from eviseek.envs.tabletop.generate import sample_question

        question = sample_question(draw, subcategories=self.subcategories)
        return self.inner.reset(options={"question": question})  # type: ignore[no-any-return]


def register_gymnasium() -> None:
    """Register eviseek's Gymnasium ids (idempotent; ``import eviseek`` already does)."""
    from eviseek._gymnasium import register_gymnasium_envs

    register_gymnasium_envs()


register_gymnasium()
