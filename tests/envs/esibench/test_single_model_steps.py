"""Single-model counts steps as ESI-Bench's own loop does: the same scripted replies, fed to
eviseek's Single-model and to the task's own reading and stopping rule (``parse_model_output``,
``should_stop``, called the way ``pipeline.py``'s loop calls them), end after the same number of
executed actions, for every task module. On the stand-in always; on the real modules with
``ESI_BENCH_ROOT`` (``scripts/check_esibench.sh``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from eviseek.agents.single_model import SingleModelAgent
from eviseek.envs import as_async
from eviseek.models.scripted import ScriptedModel
from eviseek.types import Question
from eviseek.types.taxonomy import TASK_MODULES
from tests.agents.gridworld import GridWorld
from tests.envs.esibench.test_task_actions import question_for
from tests.eval.esibench.invited import invited_answer

MAX_STEPS = 6
"""ESI-Bench's max_steps in these runs (30 in the paper; small to keep the test fast)."""


def scripts(answer: str) -> dict[str, list[dict[str, Any]]]:
    """Reply sequences: confident at once, never confident, confident from the fourth call."""

    def reply(confidence: float) -> dict[str, Any]:
        return {"action": "turn_left", "answer": answer, "confidence": confidence, "reasoning": "looked"}

    return {
        "confident": [reply(0.95)] * MAX_STEPS,
        "unsure": [reply(0.1)] * MAX_STEPS,
        "late": [reply(0.1)] * 3 + [reply(0.95)] * (MAX_STEPS - 3),
    }


def official_actions(pipeline: Any, module: Any, payload: Any, state: Any, replies: list[dict]) -> int:
    """Actions ESI-Bench's loop executes on these replies before it stops (its loop, in short:
    call ``step`` = 1, 2, ...; read the reply; stop before acting when the task says so)."""
    config = SimpleNamespace(max_steps=MAX_STEPS, min_steps=3, threshold=0.8)
    history: list[dict[str, Any]] = []
    for step in range(1, MAX_STEPS + 1):
        parsed = pipeline.task_parse_model_output(module, dict(replies[step - 1]), payload, state)
        stop, _ = pipeline.task_should_stop(module, parsed, history, step, config)
        if stop:
            return step - 1
        history.append({**parsed, "step": step})
    raise AssertionError("the official loop did not stop at max_steps")


def eviseek_actions(question: Question, replies: list[dict], **config: Any) -> int:
    import json

    script = iter(json.dumps(r) for r in replies)
    model = ScriptedModel(lambda messages, config: next(script, json.dumps({"answer": "yes"})))
    agent = SingleModelAgent(budget=MAX_STEPS, **config)
    traj = asyncio.run(agent.run(as_async(GridWorld()), question, model))
    assert traj.result is not None
    return traj.result.steps


@pytest.mark.parametrize("task", TASK_MODULES)
def test_the_stand_in_loop_and_single_model_stop_alike(standin, tmp_path: Path, task: str) -> None:
    q = question_for(task)
    module = standin.load_task_module(task)
    chosen = standin.select_question(Path(q.metadata["esibench"]["source"]), 0, None)
    for name, replies in scripts(invited_answer(q)).items():
        theirs = official_actions(standin, module, chosen.payload, {}, replies)
        # The stand-in's rule is the pipeline's default (min_steps for every task): the
        # per-subcategory minimum is the real modules' business (the test below).
        assert eviseek_actions(q, replies, min_steps=3) == theirs, (task, name, theirs)
    assert official_actions(standin, module, chosen.payload, {}, scripts("yes")["unsure"]) == MAX_STEPS - 1


def test_the_real_task_loops_and_single_model_stop_alike() -> None:
    from eviseek.envs.esibench.checkout import runner_config
    from eviseek.envs.esibench.offline import load_offline
    from eviseek.eval.esibench.dataset import LoadOptions, load_with_exclusions
    from eviseek.eval.esibench.records import ROW_FIELDS, iter_records
    from tests.eval.esibench.official import esibench_root

    root = esibench_root()
    pipeline, tasks = load_offline(root)
    firsts: dict[str, Any] = {}
    for record in iter_records(root):
        if record.runner_task not in firsts and not ("__" in record.stem and record.runner_task == "storage"):
            firsts[record.runner_task] = record
    kept, _ = load_with_exclusions(root, LoadOptions(images="skip", tasktext="off"))
    by_id = {q.metadata["esibench"]["id"]: q for q in kept}
    mismatches = []
    for task, record in sorted(firsts.items()):
        q = by_id[record.id]
        row = {k: getattr(record, k) for k in ROW_FIELDS}
        payload = pipeline.payload_from_hf_row(row)
        config = runner_config(pipeline, task, Path(record.source), threshold=0.8, min_steps=3)
        state = pipeline.task_preprocess(tasks[task], payload, Path(record.source), config) or {}
        for name, replies in scripts(invited_answer(q)).items():
            theirs = official_actions(pipeline, tasks[task], payload, state, replies)
            ours = eviseek_actions(q, replies)
            if ours != theirs:
                mismatches.append((task, name, theirs, ours))
    assert len(firsts) == 19
    assert mismatches == []
