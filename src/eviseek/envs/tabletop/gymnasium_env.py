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
from typing import Any, ClassVar

import numpy as np

from eviseek._lazy import require
from eviseek.envs.tabletop.camera import CAMERA_ACTIONS
from eviseek.envs.tabletop.env import TabletopEnv
from eviseek.types import Action, ActionSpec, Question

gym = require("gymnasium", "sim", "the Gymnasium wrapper")
spaces = gym.spaces

ANSWER_SLOTS = 16
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


class TabletopGymEnv(gym.Env):  # type: ignore[misc,name-defined]
    """Gymnasium view of :class:`~eviseek.envs.tabletop.env.TabletopEnv`."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        width: int = 320,
        height: int = 240,
        max_steps: int = 30,
        subcategories: list[str] | None = None,
        questions: list[Question] | None = None,
    ) -> None:
        """``questions``: draw episodes from these (by seed) instead of generating new ones."""
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.inner = TabletopEnv(width=width, height=height, max_steps=max_steps, subcategories=subcategories)
        self.questions = list(questions) if questions else None
        self.subcategories = subcategories
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8)
        self._slots: list[tuple[str, Any] | None] = [None] * N_ACTIONS
        self._frame: np.ndarray | None = None
        self._question: Question | None = None

    # -- slots ---------------------------------------------------------------------

    def _build_slots(self) -> None:
        assert self._question is not None
        slots: list[tuple[str, Any] | None] = [("act", Action(name=n)) for n in CAMERA_ACTIONS]
        slots.append(("act", Action(name="stop")))
        contract = self._question.contract
        answers: list[str] = (
            list(contract.options) if contract.options else [str(i) for i in range(ANSWER_SLOTS)]
        )[:ANSWER_SLOTS]
        slots += [("answer", a) for a in answers] + [None] * (ANSWER_SLOTS - len(answers))
        manip: list[Action] = []
        for spec in self.inner.legal_actions():
            if spec.kind == "manipulation" or (spec.kind != "camera" and spec.params):
                manip += _expand(spec)
        manip = manip[:MANIPULATION_SLOTS]
        slots += [("act", a) for a in manip] + [None] * (MANIPULATION_SLOTS - len(manip))
        self._slots = slots

    def action_mask(self) -> np.ndarray:
        """1 for slots meaningful in the current episode, 0 otherwise."""
        return np.array([s is not None for s in self._slots], dtype=np.int8)

    def action_names(self) -> list[str | None]:
        """What every slot does now (``None`` for masked slots)."""
        out: list[str | None] = []
        for s in self._slots:
            if s is None:
                out.append(None)
            elif s[0] == "answer":
                out.append(f"answer:{s[1]}")
            else:
                out.append(s[1].text())
        return out

    # -- gymnasium API -----------------------------------------------------------------

    def _info(self, extra: dict[str, Any]) -> dict[str, Any]:
        assert self._question is not None
        return {
            **extra,
            "question": self._question.text,
            "question_id": self._question.id,
            "action_mask": self.action_mask(),
            "action_names": self.action_names(),
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode: ``options["question"]``, else one drawn from ``seed``."""
        super().reset(seed=seed)
        question = (options or {}).get("question")
        if question is None:
            draw = int(self.np_random.integers(2**31 - 1))
            if self.questions:
                question = self.questions[draw % len(self.questions)]
            else:
                from eviseek.envs.tabletop.generate import sample_question

                question = sample_question(draw, subcategories=self.subcategories)
        obs, info = self.inner.reset(options={"question": question})
        self._question = self.inner.question
        self._build_slots()
        self._frame = obs.image.array()
        return self._frame, self._info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Take slot ``action``; answering ends the episode with the answer's score as reward."""
        idx = int(action)
        if not 0 <= idx < N_ACTIONS:
            raise ValueError(f"action {action} outside Discrete({N_ACTIONS})")
        slot = self._slots[idx]
        reward = 0.0
        if slot is not None and slot[0] == "answer":
            from eviseek.answers import score_answer

            assert self._question is not None
            reward = float(score_answer(self._question, str(slot[1])).score)
            result = self.inner.step(Action(name="stop"))
            info = {**result.info, "feedback": result.feedback.summary(), "answer": slot[1]}
            self._frame = result.observation.image.array()
            return self._frame, reward, True, False, self._info(info)
        act = slot[1] if slot is not None else Action(name=f"masked_slot_{idx}")
        result = self.inner.step(act)
        self._frame = result.observation.image.array()
        info = {**result.info, "feedback": result.feedback.summary(), "success": result.feedback.success}
        return self._frame, reward, result.terminated, result.truncated, self._info(info)

    def render(self) -> np.ndarray | None:
        """The current frame (``rgb_array`` mode)."""
        if self.render_mode == "rgb_array":
            return self._frame
        return None

    def close(self) -> None:
        """Release the simulator."""
        self.inner.close()


def register_gymnasium() -> None:
    """Register eviseek's Gymnasium ids (idempotent; ``import eviseek`` already does)."""
    from eviseek._gymnasium import register_gymnasium_envs

    register_gymnasium_envs()


register_gymnasium()
