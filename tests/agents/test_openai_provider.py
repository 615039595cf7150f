"""An EviSeek episode through the real ``openai`` client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json

import numpy as np

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.models import get_model
from eviseek.testing.openai_server import OpenAITestServer, ServerReply, request_images, request_texts
from eviseek.types import Question
from tests.agents.gridworld import GridWorld

REPLIES = [
    json.dumps({"demands": [{"text": "the cube and the box seen from above"}]}),
    "Plan:\n```json\n" + json.dumps({"subtasks": [{"goal": "overhead view", "demand": 1}]}) + "\n```",
    json.dumps({"intent": "RISE_TOPDOWN", "args": {"degrees": 30}}),
    "{'keep': True, 'note': 'both objects from above',}",  # near-JSON, as models write it
    json.dumps({"intent": "DONE"}),
    json.dumps({"answer": "yes", "reasoning": "the cube is left of the box"}),
]


async def test_episode_over_http_sends_images_and_keeps_agent_fields_private(question: Question) -> None:
    with OpenAITestServer(
        [ServerReply(text=r, prompt_tokens=100 + i, completion_tokens=10) for i, r in enumerate(REPLIES)]
    ) as server:
        model = get_model("openai/test-vlm", base_url=server.base_url, api_key="sk-test-not-a-real-key")
        traj = await make_agent("eviseek").run(as_async(GridWorld()), question, model)
    assert traj.result is not None and traj.result.answer == "yes"
    assert [s.action.name for s in traj.steps] == ["move_up"] * 3 + ["turn_down"] * 2
    bodies = [r["json"] for r in server.requests]
    assert len(bodies) == len(REPLIES)
    for body in bodies:
        assert not {"stage", "response_schema", "metadata"} & set(body)
        assert body["temperature"] == 0.2 and body["top_p"] == 0.9
    # The answering request carries the kept overhead frame, decoded back to the same pixels.
    answer_images = request_images(bodies[-1])
    assert len(answer_images) == 1 and answer_images[0].size == (32, 24)
    kept = traj.answer_images[0].array()
    assert (kept == np.asarray(answer_images[0].convert("RGB"))).all()
    assert any("both objects from above" in t for t in request_texts(bodies[-1]))
    # Usage comes from the server; the key never reaches the record.
    assert traj.result.input_tokens == sum(100 + i for i in range(len(REPLIES)))
    assert "sk-test-not-a-real-key" not in traj.model_dump_json()
