"""A Gymnasium wrapper of the house environment, registered as ``eviseek/House-v0``.

Importing this module registers the id with Gymnasium. Actions are a fixed ``Discrete`` space:

- slots 0-4: ``move_forward``, ``turn_left``, ``turn_right``, ``look_up``, ``look_down``; slot 5: ``stop``;
- the next :data:`ANSWER_SLOTS` slots: answers (the question's options in order; the integers
  0, 1, 2... for counting; for a room-sequence question, every doorway route between the two
  rooms it names). Choosing one ends the episode with reward equal to the answer's score.

Slots that mean nothing for the current question are masked in ``info["action_mask"]``;
choosing one anyway costs a step and does nothing. Observations are RGB frames (``uint8``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from eviseek._lazy import require
from eviseek.envs.house.env import NAV_ACTIONS, HouseEnv
from eviseek.envs.house.questions import ENV_ID
from eviseek.envs.house.spec import HouseSpec
from eviseek.types import Action, Question

gym = require("gymnasium", "sim", "the Gymnasium wrapper")
spaces = gym.spaces

ANSWER_SLOTS = 16
N_ACTIONS = len(NAV_ACTIONS) + 1 + ANSWER_SLOTS


def room_routes(spec: HouseSpec, start: str, goal: str, limit: int = ANSWER_SLOTS) -> list[str]:
    """Every doorway route (no room twice) from ``start`` to ``goal``, as ``a | b | c``, shortest first."""
    routes: list[list[str]] = []

    def walk(path: list[str]) -> None:
        if path[-1] == goal:
            routes.append(path)
            return
        for nxt in spec.neighbours(path[-1]):
            if nxt not in path:
                walk([*path, nxt])

    walk([start])
    routes.sort(key=lambda r: (len(r), r))
    return [" | ".join(r) for r in routes[:limit]]


class HouseGymEnv(gym.Env):  # type: ignore[misc,name-defined]
    """Gymnasium view of :class:`~eviseek.envs.house.env.HouseEnv`."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        width: int = 320,
        height: int = 240,
        max_steps: int = 120,
        kinds: list[str] | None = None,
        questions: list[Question] | None = None,
    ) -> None:
        """``questions``: draw episodes from these (by seed) instead of generating new ones."""
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.inner = HouseEnv(width=width, height=height, max_steps=max_steps, kinds=kinds)
        self.questions = list(questions) if questions else None
        self.kinds = kinds
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8)
        self._answers: list[str] = []
        self._frame: np.ndarray | None = None
        self._question: Question | None = None

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
            return list(c.options)[:ANSWER_SLOTS]
        if c.kind == "integer":
            return [str(i) for i in range(ANSWER_SLOTS)]
        return []

    def action_mask(self) -> np.ndarray:
        """1 for slots meaningful in the current episode, 0 otherwise."""
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        mask[: len(NAV_ACTIONS) + 1] = 1
        mask[len(NAV_ACTIONS) + 1 : len(NAV_ACTIONS) + 1 + len(self._answers)] = 1
        return mask

    def action_names(self) -> list[str | None]:
        """What every slot does now (``None`` for masked slots)."""
        names: list[str | None] = [*NAV_ACTIONS, "stop"]
        names += [f"answer:{a}" for a in self._answers]
        return names + [None] * (N_ACTIONS - len(names))

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
                obs, info = self.inner.reset(options={"question": question})
            else:
                obs, info = self.inner.reset(seed=draw)
        else:
            obs, info = self.inner.reset(options={"question": question})
        self._question = self.inner.question
        self._answers = self._answer_list()
        self._frame = obs.image.array()
        return self._frame, self._info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Take slot ``action``; answering ends the episode with the answer's score as reward."""
        idx = int(action)
        if not 0 <= idx < N_ACTIONS:
            raise ValueError(f"action {action} outside Discrete({N_ACTIONS})")
        base = len(NAV_ACTIONS) + 1
        if base <= idx < base + len(self._answers):
            from eviseek.answers import score_answer

            assert self._question is not None
            answer = self._answers[idx - base]
            reward = float(score_answer(self._question, answer).score)
            result = self.inner.step(Action(name="stop"))
            info = {**result.info, "feedback": result.feedback.summary(), "answer": answer}
            self._frame = result.observation.image.array()
            return self._frame, reward, True, False, self._info(info)
        name = [*NAV_ACTIONS, "stop"][idx] if idx < base else f"masked_slot_{idx}"
        result = self.inner.step(Action(name=name))
        self._frame = result.observation.image.array()
        info = {**result.info, "feedback": result.feedback.summary(), "success": result.feedback.success}
        return self._frame, 0.0, result.terminated, result.truncated, self._info(info)

    def render(self) -> np.ndarray | None:
        """The current frame (``rgb_array`` mode)."""
        return self._frame if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        """Release the simulator."""
        self.inner.close()


def register_gymnasium() -> None:
    """Register ``eviseek/House-v0`` with Gymnasium (idempotent)."""
    if ENV_ID not in gym.envs.registry:
        gym.register(id=ENV_ID, entry_point=f"{__name__}:HouseGymEnv", max_episode_steps=None)


register_gymnasium()
