"""A complete eviseek plugin: an environment, a model provider, an agent and a benchmark.

The task: a card lies face up on a table; the question asks the colour of its back. The front
says nothing about the back, so an agent has to act (flip the card) to see the evidence. Load it
into any command with ``--plugin examples/plugins/card_flip.py``:

    eviseek eval --plugin examples/plugins/card_flip.py --dataset cards:6 \
        --agents card-flipper,passive --model colour/reader --out runs/cards

Everything here is plain Python and numpy; the four ``register*`` calls at the bottom are what
makes eviseek see it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from eviseek.agents import register_agent
from eviseek.envs import AsyncEnv, question_from_options, register
from eviseek.eval.benchmark import register_benchmark
from eviseek.models import Model, ScriptedModel, generate_recorded, register_provider
from eviseek.types import (
    Action,
    ActionSpec,
    AnswerContract,
    ChatMessage,
    EpisodeResult,
    Feedback,
    GenerateConfig,
    Image,
    ImagePart,
    Observation,
    Question,
    StepRecord,
    StepResult,
    Trajectory,
)

ENV_ID = "cards/Flip-v0"
COLOURS = {"red": (200, 30, 30), "green": (30, 160, 60), "blue": (30, 60, 200), "yellow": (220, 200, 40)}


# --- 1. The environment: follows the Env protocol (reset, step, legal_actions, close) --------------
class CardEnv:
    """Shows the card's front; ``flip`` shows its back. Grades visual support exactly."""

    env_id = ENV_ID

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self.question: Question | None = None
        self.flipped = False
        self.frames: dict[int, bool] = {}  # frame id -> does it show the back?

    def _observe(self) -> Observation:
        assert self.question is not None
        side = "back" if self.flipped else "front"
        pixels = np.zeros((self.size, self.size, 3), dtype=np.uint8)
        pixels[:] = COLOURS[self.question.scene[side]]
        frame_id = len(self.frames)
        self.frames[frame_id] = self.flipped
        return Observation(image=Image.from_array(pixels), frame_id=frame_id)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
        self.question = question_from_options(options)  # the harness passes the question here
        self.flipped = False
        self.frames = {}
        return self._observe(), {}

    def step(self, action: Action) -> StepResult:
        if action.name == "flip":
            self.flipped = not self.flipped
            return StepResult(observation=self._observe(), feedback=Feedback(operation="flip"))
        failed = Feedback(operation=action.name, success=False, reason="unknown action")
        return StepResult(observation=self._observe(), feedback=failed)

    def legal_actions(self) -> list[ActionSpec]:
        return [ActionSpec(name="flip", kind="manipulation")]

    def visual_support(self, frame_ids: list[int]) -> float:
        """1 when an image the answer was given shows the back of the card (the evidence)."""
        return 1.0 if any(self.frames.get(f) for f in frame_ids) else 0.0

    def close(self) -> None:
        pass


# --- 2. The model provider: here a tiny "VLM" that names the colour of the last image ----------
def read_colour(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
    images = [
        p.image
        for m in messages
        if isinstance(m.content, list)
        for p in m.content
        if isinstance(p, ImagePart)
    ]
    mean = images[-1].array().reshape(-1, 3).mean(axis=0)
    return min(COLOURS, key=lambda c: float(np.linalg.norm(mean - np.array(COLOURS[c]))))


def colour_provider():  # type: ignore[no-untyped-def]
    """The loader returns the factory; eviseek calls ``factory(name, **model_args)``."""
    return lambda name, **_: ScriptedModel(read_colour, name=f"colour/{name}")


# --- 3. The agent: flip the card, then ask the model about what it sees --------------------------
class CardFlipper:
    def __init__(self, name: str = "card-flipper", **_: Any) -> None:
        self.name = name

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        started = time.perf_counter()
        obs, _ = await env.reset(seed=seed, options={"question": question})
        traj = Trajectory(
            episode_id=f"{question.id}-{seed}",
            question_id=question.id,
            agent=self.name,
            model=model.name,
            initial_image=obs.image,
        )
        flip = Action(name="flip")
        res = await env.step(flip)
        obs = res.observation
        traj.steps.append(StepRecord.from_step(1, flip, res))
        prompt = [ChatMessage.user(obs.image, question.text)]
        completion, call = await generate_recorded(model, prompt, GenerateConfig(stage="answer"))
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


# --- 4. The benchmark: a dataset spec ``cards:N`` (N questions, generated from a fixed seed) ------
def card_questions(spec: str) -> list[Question]:
    rng = np.random.default_rng(0)
    names = list(COLOURS)
    questions = []
    for i in range(int(spec or 4)):
        front, back = rng.choice(names, size=2, replace=False)
        questions.append(
            Question(
                id=f"cards-{i:03d}",
                text="What colour is the back of the card on the table?",
                contract=AnswerContract(kind="option", options=names),
                family="Cards",
                subcategory="Hidden side",
                ground_truth=str(back),
                env_id=ENV_ID,
                scene={"front": str(front), "back": str(back)},
            )
        )
    return questions


register(ENV_ID, CardEnv)
register_provider("colour", colour_provider, "names the colour of the last image (card_flip example)")
register_agent("card-flipper", lambda **kw: CardFlipper(**kw))
register_benchmark("cards", card_questions, env_id=ENV_ID, budget=4, description="the card-flip example")
