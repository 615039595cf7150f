"""Passive: one image, one answer."""

from __future__ import annotations

import numpy as np

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.types import Image, Question
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript


async def test_one_call_one_image_no_steps(question: Question, grid: GridWorld) -> None:
    script = StageScript(passive=[{"answer": "(B)", "reasoning": "the cube is on the right"}])
    traj = await make_agent("passive").run(as_async(grid), question, script.model())
    assert traj.result is not None
    assert traj.result.answer == "no" and traj.result.raw_answer == "(B)"
    assert (traj.result.steps, traj.result.calls, traj.result.images_in_answer) == (0, 1, 1)
    assert traj.result.mode == "passive" and grid.steps_taken == []
    cfg, messages = script.calls("passive")[0]
    assert (cfg.temperature, cfg.top_p, cfg.max_tokens) == (0.0, 1.0, 512)
    assert cfg.response_schema is not None and "answer" in cfg.response_schema["properties"]
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[1].images() == traj.answer_images
    assert traj.answer_frame_ids == [0]


async def test_reference_images_travel_with_the_view(question: Question, grid: GridWorld) -> None:
    ref = Image.from_array(np.zeros((4, 4, 3), dtype=np.uint8))
    q = question.model_copy(update={"reference_images": [ref]})
    script = StageScript(passive=["I would say yes."])  # not JSON: read from the text, logged
    traj = await make_agent("passive").run(as_async(grid), q, script.model())
    assert traj.answer_frame_ids == [-1, 0]
    assert traj.result is not None and traj.result.answer == "yes"
    assert [e.kind for e in traj.events] == ["parse_failure"]


async def test_prose_reply_with_an_answer_line_is_answered_and_logged(
    question: Question, grid: GridWorld
) -> None:
    reply = "The cube is on the right of the sphere in this view, as far as I can see.\nAnswer: B"
    traj = await make_agent("passive").run(as_async(grid), question, StageScript(passive=[reply]).model())
    assert traj.result is not None and traj.result.answer == "no" and traj.result.raw_answer == "B"
    (event,) = traj.events
    assert event.kind == "answer_extracted" and event.data["form"] == "answer label"
