"""What of a task's action result reaches the agents: operation, success, reason and the fields of
the allow-list (appendix D), never stacking's accepted orders, a world pose or a task's answer
bookkeeping. The stand-in's results carry, for each task module, the fields the real module's
results carry (tests/envs/esibench/standin/pipeline.py: ACTION_RESULT_FIELDS)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from eviseek.agents import make_agent
from eviseek.agents.single_model import SingleModelAgent
from eviseek.envs.base import as_async
from eviseek.envs.esibench import ESIBenchEnv
from eviseek.envs.esibench.env import FEEDBACK_STATE, feedback_of
from eviseek.models.scripted import ScriptedModel
from eviseek.types import Action, ChatMessage
from eviseek.types.taxonomy import TASK_MODULES
from tests.agents.scripts import StageScript
from tests.envs.esibench.test_task_actions import CAMERA, question_for

FORBIDDEN = ("gt_orders", "secret", "quaternion", "7.125", "-3.5", "0.3827", "final_answer", "history_update")


def _own_actions(env: ESIBenchEnv) -> list[Action]:
    acts = []
    for spec in env.legal_actions():
        if spec.name in CAMERA:
            continue
        args = {p: (spec.choices.get(p) or ["red mug"])[i % 2] for i, p in enumerate(spec.params)}
        acts.append(Action(name=spec.name, args=args))
    return acts


def _leaks(text: str) -> list[str]:
    return [f for f in FORBIDDEN if f in text.lower()]


def test_the_result_fields_outside_the_allow_list_are_dropped() -> None:
    result = {
        "handled": True,
        "operation": "place_on_top",
        "success": True,
        "object": "mug",
        "target": "tray",
        "current_stack": ["tray", "mug"],
        "gt_orders": [["tray", "mug", "lid"]],
        "position": [1.0, 2.0, 3.0],
        "quaternion_xyzw": [0, 0, 0, 1],
        "extra_image_paths": ["a.png"],
        "something_new": 1,
    }
    fb = feedback_of(result)
    assert fb.state == {"object": "mug", "target": "tray", "current_stack": ["tray", "mug"]}
    assert (fb.operation, fb.success, fb.reason) == ("place_on_top", True, "")
    assert feedback_of({"handled": True, "operation": "pour", "success": False, "error": "no"}).reason == "no"


@pytest.mark.parametrize("task", TASK_MODULES)
def test_no_agent_request_carries_what_the_task_keeps_to_itself(standin, tmp_path: Path, task: str) -> None:
    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps"))
    env.reset(options={"question": question_for(task)})
    own = _own_actions(env)
    for action in [*own, Action(name="turn_left")]:
        fb = env.step(action).feedback
        assert set(fb.state) <= FEEDBACK_STATE, (task, action.name, fb.state)
        assert not _leaks(fb.summary(10_000)), (task, fb)
    env.close()

    # Single-model runs every own action of the task, then answers.
    seen: list[list[ChatMessage]] = []
    replies = iter(
        [
            *(
                json.dumps(
                    {"action": {"name": a.name, "args": a.args}, "answer": "unsure", "confidence": 0.1}
                )
                for a in own
            ),
            json.dumps({"action": "stop", "answer": "yes", "confidence": 0.9, "reasoning": "done"}),
        ]
    )

    def reply(messages, config):  # type: ignore[no-untyped-def]
        seen.append(list(messages))
        return next(replies, json.dumps({"answer": "yes"}))

    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps2"))
    agent = SingleModelAgent(budget=len(own) + 2, min_steps=0)
    traj = asyncio.run(agent.run(as_async(env), question_for(task), ScriptedModel(reply)))
    env.close()
    assert [s.action.name for s in traj.steps] == [a.name for a in own], task
    assert all(s.feedback.operation != "noop" for s in traj.steps), task
    text = "\n".join(m.text() for ms in seen for m in ms)
    assert not _leaks(text), (task, _leaks(text))
    if task == "stacking":
        assert "current_stack=['tray', 'red mug']" in text  # the task's own state does reach it


async def test_eviseek_sees_no_accepted_order(standin, tmp_path: Path) -> None:
    script = StageScript(
        demands=[{"demands": [{"text": "which order stays upright"}]}],
        plan=[{"subtasks": [{"goal": "stack them and watch", "demand": 1}]}],
        seek=[
            {"intent": "place_on_top_of", "args": {"object": "red mug", "target": "tray"}},
            {"intent": "DONE"},
        ],
        curate=lambda cfg: {"frames": []},
        answer=[{"answer": "yes", "reasoning": "it held"}],  # the record read is Physical Contact
    )
    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps"))
    traj = await make_agent("eviseek:paper").run(as_async(env), question_for("stacking"), script.model())
    env.close()
    assert [s.action.name for s in traj.steps] == ["place_on_top_of"]
    text = "\n".join(m.text() for _, _, ms in script.log for m in ms)
    assert "current_stack" in text and not _leaks(text), _leaks(text)


# Fields of the real modules' action results that feedback drops on purpose (ESI-Bench 9f35528).
DROPPED = {
    "position",
    "quaternion_xyzw",
    "gt_orders",
    "extra_image_paths",
    "all_frame_paths",
    "sampled_frame_paths",
    "final_answer",
    "history_update",
    "scenario",
    "pair_index",
}
MAIN = {"handled", "operation", "success", "error", "reason"}


def _result_fields(source: Path) -> set[str]:
    """The keys of every dict literal with a ``handled`` key in a module: its action results."""
    import ast

    keys: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            names = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if "handled" in names:
                keys |= names
    return keys


def test_every_field_of_the_real_modules_results_is_kept_or_dropped_on_purpose() -> None:
    from tests.eval.esibench.official import esibench_root

    runner = esibench_root() / "src" / "active_explore"
    sources = [runner / "pipeline.py", *sorted((runner / "tasks").glob("*.py"))]
    assert len(sources) == 20
    seen: set[str] = set()
    for source in sources:
        fields = _result_fields(source)
        assert fields <= MAIN | FEEDBACK_STATE | DROPPED, (
            source.name,
            fields - MAIN - FEEDBACK_STATE - DROPPED,
        )
        # Every field at once, with values that must not show: only the allowed ones come through.
        result = {k: f"secret-{k}" for k in fields} | {"handled": True, "operation": "op", "success": True}
        fb = feedback_of(result)
        assert set(fb.state) == fields & FEEDBACK_STATE
        assert not {k for k in DROPPED if f"secret-{k}" in fb.summary(10_000)}
        seen |= fields
    assert {"gt_orders", "position", "quaternion_xyzw", "current_stack"} <= seen
