"""A small pure-Python environment, two agents and a model for the harness tests.

Loaded with ``--plugin tests/eval/toy_plugin.py`` by CLI subprocesses, or imported directly.

The environment hides a colour that shows up in the observation after ``reveal_after`` looks;
it grades visual support exactly (1 when an answer-time frame shows the colour). The seeking
agent looks until it sees the colour and asks the model; the model answers with the evidence
it was given in the request metadata, or the first option when it was given none. Question
metadata can make an episode crash (agent or environment) or hang, to test failure handling.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from eviseek.agents import register_agent
from eviseek.envs.base import AsyncEnv, question_from_options
from eviseek.envs.registry import register
from eviseek.models.base import Model, generate_recorded
from eviseek.models.registry import register_provider
from eviseek.models.scripted import ScriptedModel
from eviseek.types import (
    Action,
    ActionSpec,
    AnswerContract,
    ChatMessage,
    EpisodeResult,
    Feedback,
    GenerateConfig,
    Image,
    Observation,
    Question,
    StepRecord,
    StepResult,
    Trajectory,
)
from eviseek.types.plans import ModePlan

ENV_ID = "toy/Reveal-v0"
COLOURS = ["red", "green", "blue", "yellow"]


class RevealEnv:
    """The colour becomes visible after ``reveal_after`` ``look`` actions."""

    env_id = ENV_ID

    def __init__(self) -> None:
        self.question: Question | None = None
        self.frame = 0
        self.closed = False

    def _obs(self) -> Observation:
        assert self.question is not None
        shown = self.frame >= int(self.question.scene.get("reveal_after", 1))
        arr = np.zeros((8, 8, 3), dtype=np.uint8)
        arr[:, :, 0] = 10 * self.frame
        meta = {"colour": self.question.scene["colour"]} if shown else {}
        return Observation(image=Image.from_array(arr), frame_id=self.frame, metadata=meta)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
        self.question = question_from_options(options)
        self.frame = 0
        return self._obs(), {"seed": seed}

    def step(self, action: Action) -> StepResult:
        assert self.question is not None
        if self.question.scene.get("env_crash"):
            raise RuntimeError("simulated simulator crash")
        if self.question.scene.get("env_exit"):
            os._exit(3)  # a simulator that takes its whole process down (a segfault, say)
        time.sleep(float(self.question.scene.get("step_delay_s", 0.0)))  # a slow simulator
        if action.name != "look":
            return StepResult(
                observation=self._obs(),
                feedback=Feedback(operation=action.name, success=False, reason="unknown action"),
            )
        self.frame += 1
        return StepResult(observation=self._obs(), feedback=Feedback(operation="look"))

    def legal_actions(self) -> list[ActionSpec]:
        return [ActionSpec(name="look", kind="camera")]

    def visual_support(self, frame_ids: list[int]) -> float:
        assert self.question is not None
        reveal = int(self.question.scene.get("reveal_after", 1))
        return 1.0 if any(f >= reveal for f in frame_ids) else 0.0

    def close(self) -> None:
        self.closed = True


register(ENV_ID, RevealEnv)

PLACED_ENV_ID = "toy/Placed-v0"
"""The same environment under an id that declares one unit of a custom Ray resource (for the
placement test); registered at import only where ``TOY_PLACED_RESOURCE`` names that resource."""


class PlacedRevealEnv(RevealEnv):
    """:class:`RevealEnv` registered as :data:`PLACED_ENV_ID`."""

    env_id = PLACED_ENV_ID


def register_placed(resource: str) -> None:
    """Register :data:`PLACED_ENV_ID`, one instance needing one ``resource``."""
    register(PLACED_ENV_ID, PlacedRevealEnv, resources={resource: 1})


if os.environ.get("TOY_PLACED_RESOURCE"):
    register_placed(os.environ["TOY_PLACED_RESOURCE"])


def _log_start(agent: str, question: Question) -> None:
    path = os.environ.get("TOY_EPISODE_LOG")
    if path:
        # One short O_APPEND write per line: lines from concurrent writers do not interleave.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{os.getpid()} {agent} {question.id}\n".encode())
        finally:
            os.close(fd)


class ToyAgent:
    """Looks up to ``budget`` times until the colour shows (``seek=False``: never looks)."""

    def __init__(self, name: str, *, seek: bool = True, budget: int = 30, **_: Any) -> None:
        self.name = name
        self.seek = seek
        self.budget = budget

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        _log_start(self.name, question)
        if question.metadata.get("agent_crash"):
            raise RuntimeError(f"agent bug on {question.id}")
        if question.metadata.get("hang"):
            await asyncio.sleep(3600)
        started = time.perf_counter()
        obs, _ = await env.reset(seed=seed, options={"question": question})
        traj = Trajectory(
            episode_id=f"{question.id}-{seed}",
            question_id=question.id,
            agent=self.name,
            model=model.name,
            initial_image=obs.image,
            plan=ModePlan(mode="active" if self.seek else "passive"),
        )
        while self.seek and "colour" not in obs.metadata and len(traj.steps) < self.budget:
            await env.legal_actions()
            res = await env.step(Action(name="look"))
            obs = res.observation
            traj.steps.append(
                StepRecord(
                    index=len(traj.steps) + 1,
                    action=Action(name="look"),
                    feedback=res.feedback,
                    image=obs.image,
                    frame_id=obs.frame_id,
                )
            )
        cfg = GenerateConfig(
            stage="answer",
            metadata={"evidence": obs.metadata.get("colour"), "options": question.contract.options or []},
        )
        completion, call = await generate_recorded(
            model, [ChatMessage.user(obs.image, f"{question.text} (question {question.id})")], cfg
        )
        traj.calls.append(call)
        traj.answer_images = [obs.image]
        traj.answer_frame_ids = [obs.frame_id]
        traj.result = EpisodeResult(
            question_id=question.id,
            agent=self.name,
            raw_answer=completion.text,
            wall_time_s=time.perf_counter() - started,
        )
        return traj


register_agent("toy-seeker", lambda **kw: ToyAgent("toy-seeker", seek=True, **kw))
register_agent("toy-passive", lambda **kw: ToyAgent("toy-passive", seek=False, **kw))


def _oracle(messages: Any, config: GenerateConfig) -> str:
    evidence = config.metadata.get("evidence")
    if evidence:
        return f"Answer: {evidence}"
    options = config.metadata.get("options") or ["unknown"]
    return str(options[0])


def _toy_provider():  # type: ignore[no-untyped-def]
    def factory(name: str, delay_s: float = 0.0, **_: Any) -> ScriptedModel:
        return ScriptedModel(_oracle, name=f"toy/{name}", delay_s=float(delay_s))

    return factory


register_provider("toy", _toy_provider)


def make_questions(
    n: int,
    *,
    families: tuple[str, ...] = ("colour", "shade"),
    special: dict[str, dict[str, Any]] | None = None,
) -> list[Question]:
    """``n`` questions over a few families; ``special={qid: metadata}`` marks special ones
    (a ``scene`` entry in it updates the scene)."""
    out = []
    special = special or {}
    for i in range(n):
        qid = f"q{i:03d}"
        colour = COLOURS[(i * 7 + 1) % len(COLOURS)]
        meta = dict(special.get(qid, {}))
        scene = {"colour": colour, "reveal_after": 1 + i % 3}
        scene.update(meta.pop("scene", {}))
        out.append(
            Question(
                id=qid,
                text="What colour is the hidden light?",
                contract=AnswerContract(kind="option", options=list(COLOURS)),
                family=families[i % len(families)],
                subcategory=f"sub{i % 3}",
                ground_truth=colour,
                env_id=ENV_ID,
                scene=scene,
                metadata=meta,
            )
        )
    return out


def write_questions_jsonl(path: str | Path, questions: list[Question]) -> Path:
    """Write questions as a JSONL dataset file."""
    path = Path(path)
    path.write_text("".join(json.dumps(q.model_dump(mode="json")) + "\n" for q in questions))
    return path
