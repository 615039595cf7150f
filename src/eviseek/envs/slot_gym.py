"""The Gymnasium view shared by the simulated envs: one fixed ``Discrete`` space of slots.

A slot is either an env action or an answer. Each wrapper lays out its slots per question (its
primitives and ``stop`` first, then up to :data:`ANSWER_SLOTS` answers, then anything of its
own); slots that mean nothing for the current question stay ``None``, are masked out in
``info["action_mask"]`` and, if chosen anyway, cost a step and do nothing. Choosing an answer
ends the episode with the answer's score as reward. Observations are RGB frames (``uint8``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from eviseek._lazy import require
from eviseek.types import Action, Observation, Question

gym = require("gymnasium", "sim", "the Gymnasium wrapper")
spaces = gym.spaces

ANSWER_SLOTS = 16
Slot = tuple[str, Any] | None
"""``("act", Action)``, ``("answer", text)`` or ``None`` (masked)."""


class SlotGymEnv(gym.Env):  # type: ignore[misc,name-defined]
    """Base of the slot wrappers; a subclass sets ``n_actions``, ``inner`` and ``questions`` and
    supplies :meth:`_slot_list` and :meth:`_reset_drawn`."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}
    n_actions: ClassVar[int]
    inner: Any
    """The wrapped eviseek env (``reset``, ``step``, ``question``, ``close``)."""
    questions: list[Question] | None

    def _setup(
        self, render_mode: str | None, width: int, height: int, questions: list[Question] | None
    ) -> None:
        """The start of every wrapper's constructor (which then builds ``inner``): check
        ``render_mode``, lay out the spaces for frames of ``width`` x ``height`` and keep a copy
        of the ``questions`` to draw from (an empty list counts as none)."""
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.n_actions)
        self.observation_space = spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8)
        self._slots: list[Slot] = [None] * self.n_actions
        self._frame: np.ndarray | None = None
        self._question: Question | None = None
        self.questions = list(questions) if questions else None

    def _slot_list(self) -> list[Slot]:
        """The current question's slots, ``n_actions`` long."""
        raise NotImplementedError

    def _reset_drawn(self, draw: int) -> tuple[Observation, dict[str, Any]]:
        """Reset ``inner`` on a question drawn from ``draw`` when no ``questions`` were given."""
        raise NotImplementedError

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
                obs, info = self.inner.reset(options={"question": self.questions[draw % len(self.questions)]})
            else:
                obs, info = self._reset_drawn(draw)
        else:
            obs, info = self.inner.reset(options={"question": question})
        self._question = self.inner.question
        self._slots = self._slot_list()
        self._frame = obs.image.array()
        return self._frame, self._info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Take slot ``action``; answering ends the episode with the answer's score as reward."""
        idx = int(action)
        if not 0 <= idx < self.n_actions:
            raise ValueError(f"action {action} outside Discrete({self.n_actions})")
        slot = self._slots[idx]
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
        return self._frame, 0.0, result.terminated, result.truncated, self._info(info)

    def render(self) -> np.ndarray | None:
        """The current frame (``rgb_array`` mode)."""
        return self._frame if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        """Release the simulator."""
        self.inner.close()


def answer_slots(answers: list[str]) -> list[Slot]:
    """``answers`` as exactly :data:`ANSWER_SLOTS` slots (cut or padded with masked ones)."""
    answers = answers[:ANSWER_SLOTS]
    return [("answer", a) for a in answers] + [None] * (ANSWER_SLOTS - len(answers))
