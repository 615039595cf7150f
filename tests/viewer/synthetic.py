"""Synthetic episodes of the three agents, saved the way a run saves them, for viewer tests.

The trajectories follow the recorded conventions (EviSeek's plan, subtasks, board and answer
images) with generated frames, so the viewer can be tested before any agent exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from eviseek.types import (
    Action,
    AnswerContract,
    BoardEvent,
    ChatMessage,
    EpisodeResult,
    EvidenceItem,
    Feedback,
    GenerateConfig,
    Image,
    ModelCall,
    Pose,
    Question,
    StepRecord,
    Trajectory,
    Usage,
)

QID = "align-007"
SCRIPT_IN_REPLY = "<script>window.__pwned = 1</script>"
TAG_IN_ANSWER = '<img src=x onerror="window.__pwned = 2">'
NOTE_WITH_MARKUP = "overhead view: all three on one line <b>bold?</b>"


def frame(seed: int, width: int = 160, height: int = 120) -> Image:
    """A distinct generated view: a tinted floor with three coloured blocks placed by ``seed``."""
    rng = np.random.default_rng(seed)
    arr = np.zeros((height, width, 3), dtype=np.uint8)
    arr[:] = (200 + seed % 40, 190, 170 - seed % 50)
    for colour in ((220, 40, 40), (40, 80, 220), (40, 170, 60)):
        x = int(rng.integers(0, width - 24))
        y = int(rng.integers(0, height - 24))
        arr[y : y + 20, x : x + 20] = colour
    return Image.from_array(arr)


def alignment_question() -> Question:
    """A yes/no tabletop question whose truth is ``yes``."""
    return Question(
        id=QID,
        text="Are the red cube, the blue ball and the green cylinder on one straight line?",
        contract=AnswerContract(kind="yes_no", options=["yes", "no"], format_hint="Answer yes or no."),
        family="Spatial",
        subcategory="alignment",
        ground_truth="yes",
        guidance="An overhead view shows the layout of all three objects at once.",
    )


def _call(stage: str, text: str, output: str, images: list[Image], tokens: tuple[int, int]) -> ModelCall:
    parts: list[str | Image] = [text, *images]
    msgs = [ChatMessage.system("You are a careful embodied agent."), ChatMessage.user(*parts)]
    return ModelCall(
        stage=stage,
        model="scripted/test",
        messages=msgs,
        config=GenerateConfig(stage=stage),
        output=output,
        usage=Usage(input_tokens=tokens[0], output_tokens=tokens[1], images_sent=len(images)),
        latency_s=0.01,
    )


def _result(agent: str, answer: str | None, raw: str | None, **kw: object) -> EpisodeResult:
    return EpisodeResult(
        question_id=QID,
        agent=agent,
        model="scripted/test",
        family="Spatial",
        subcategory="alignment",
        answer=answer,
        raw_answer=raw,
        ground_truth="yes",
        **kw,  # type: ignore[arg-type]
    )


def eviseek_trajectory() -> Trajectory:
    """Seven frames (start + six steps) over three subtasks; board keeps frames 4 and 6."""
    frames = [frame(i) for i in range(7)]
    plan = {
        "demands": [
            {"id": 1, "text": "where all three objects are, seen in one view"},
            {"id": 2, "text": "whether the middle object deviates from the line"},
        ],
        "subtasks": [
            {
                "id": 1,
                "goal": "rise for an overhead view of the three objects",
                "demand": 1,
                "status": "done",
                "steps": [1, 2, 3, 4],
            },
            {
                "id": 2,
                "goal": "look along the line from one end",
                "demand": 2,
                "status": "timed_out",
                "steps": [5, 6],
            },
            {"id": 3, "goal": "check the far side", "demand": 2, "status": "pending", "steps": []},
        ],
        "mode": "active",
    }
    actions = [
        ("move_up", "RISE_TOPDOWN", 1, True, ""),
        ("move_up", "RISE_TOPDOWN", 1, True, ""),
        ("move_up", "RISE_TOPDOWN", 1, True, ""),
        ("turn_down", "RISE_TOPDOWN", 1, True, ""),
        ("move_right", "ORBIT", 2, False, "blocked by the table edge"),
        ("turn_left", "ORBIT", 2, True, ""),
    ]
    steps = [
        StepRecord(
            index=i + 1,
            action=Action(name=name),
            feedback=Feedback(operation=name, success=ok, reason=why),
            image=frames[i + 1],
            frame_id=i + 1,
            pose=Pose(z=0.25 * min(i + 1, 3)),
            intent=intent,
            subtask=sub,
            decision=0 if i < 4 else 1,
        )
        for i, (name, intent, sub, ok, why) in enumerate(actions)
    ]
    item1 = EvidenceItem(
        id=1,
        frame_id=4,
        step_index=4,
        image=frames[4],
        intent="RISE_TOPDOWN",
        subtask=1,
        demand=1,
        note=NOTE_WITH_MARKUP,
    )
    item2 = EvidenceItem(
        id=2,
        frame_id=2,
        step_index=2,
        image=frames[2],
        intent="RISE_TOPDOWN",
        subtask=1,
        demand=1,
        note="partial overhead",
    )
    item3 = EvidenceItem(
        id=3,
        frame_id=6,
        step_index=6,
        image=frames[6],
        intent="ORBIT",
        subtask=2,
        demand=None,
        note="view along the line",
    )
    item3_bound = item3.model_copy(update={"demand": 2, "note": "view along the line: no deviation"})
    board = [
        BoardEvent(kind="add", item=item2, at_step=2),
        BoardEvent(kind="add", item=item1, at_step=4),
        BoardEvent(kind="remove", item=item2, at_step=4),
        BoardEvent(kind="add", item=item3, at_step=6),
        BoardEvent(kind="bind", item=item3_bound, at_step=6),
    ]
    calls = [
        _call(
            "demands",
            "List the evidence this question needs.",
            '{"demands": ["..."]}',
            [frames[0]],
            (120, 30),
        ),
        _call("plan", "Plan subtasks.", '{"subtasks": ["..."]}', [frames[0]], (150, 40)),
        _call("seek", "Choose an intent.", '{"intent": "RISE_TOPDOWN"}', [frames[0]], (200, 10)),
        _call("seek", "Choose an intent.", "I think ORBIT is best", [frames[4]], (210, 8)),
        _call("keep", "Keep this view?", '{"keep": true}', [frames[4]], (90, 6)),
        _call("answer", "Answer from the board.", '{"answer": "yes"}', [frames[4], frames[6]], (300, 12)),
    ]
    traj = Trajectory(
        episode_id="ep-eviseek-1",
        question_id=QID,
        agent="eviseek",
        model="scripted/test",
        initial_image=frames[0],
        initial_pose=Pose(),
        plan=plan,
        steps=steps,
        calls=calls,
        board=board,
        answer_images=[frames[4], frames[6]],
        answer_frame_ids=[4, 6],
    )
    traj.log(
        "parse_failure",
        "seek reply had no JSON; falling back to the subtask's default intent",
        stage="seek",
        at_step=4,
        data={"raw": "I think ORBIT is best"},
    )
    traj.log("subtask_timeout", "subtask 2 spent its step allowance", stage="seek", at_step=6)
    traj.result = _result(
        "eviseek",
        "yes",
        "yes",
        correct=True,
        score=1.0,
        support=1.0,
        mode="active",
        steps=6,
        calls=len(calls),
        input_tokens=1070,
        output_tokens=106,
        reasoning_tokens=0,
        images_in_answer=2,
        wall_time_s=3.5,
    )
    return traj


def single_model_trajectory() -> Trajectory:
    """Four steps, no plan, no board; its reply carries markup that must stay text."""
    frames = [frame(100 + i) for i in range(5)]
    steps = [
        StepRecord(
            index=i + 1,
            action=Action(name="move_forward"),
            feedback=Feedback(operation="move_forward"),
            image=frames[i + 1],
            frame_id=i + 1,
        )
        for i in range(4)
    ]
    calls = [
        _call(
            "single_step",
            "Decide the next action.",
            f'{{"action": "move_forward"}} {SCRIPT_IN_REPLY}',
            frames[: i + 1],
            (100 + 10 * i, 20),
        )
        for i in range(4)
    ] + [_call("forced_choice", "Pick yes or no.", TAG_IN_ANSWER + " no", frames[2:], (80, 4))]
    traj = Trajectory(
        episode_id="ep-single-1",
        question_id=QID,
        agent="single_model",
        model="scripted/test",
        initial_image=frames[0],
        steps=steps,
        calls=calls,
        answer_images=frames[2:],
        answer_frame_ids=[2, 3, 4],
    )
    traj.log(
        "parse_failure",
        f"reply was not JSON: {SCRIPT_IN_REPLY}",
        stage="single_step",
        at_step=2,
        data={"fallback": "move_forward"},
    )
    traj.result = _result(
        "single_model",
        "no",
        TAG_IN_ANSWER + " no",
        correct=False,
        score=0.0,
        support=0.5,
        steps=4,
        calls=len(calls),
        input_tokens=540,
        output_tokens=84,
        images_in_answer=3,
    )
    return traj


def passive_trajectory() -> Trajectory:
    """One look, one call, no steps."""
    start = frame(200)
    call = _call("passive", "Answer from this image.", '{"answer": "no"}', [start], (60, 5))
    traj = Trajectory(
        episode_id="ep-passive-1",
        question_id=QID,
        agent="passive",
        model="scripted/test",
        initial_image=start,
        calls=[call],
        answer_images=[start],
        answer_frame_ids=[0],
    )
    traj.result = _result(
        "passive",
        "no",
        "no",
        correct=False,
        score=0.0,
        support=0.0,
        mode="passive",
        calls=1,
        input_tokens=60,
        output_tokens=5,
        images_in_answer=1,
    )
    return traj


def write_synthetic_run(run_dir: Path) -> dict[str, Path]:
    """Save the three episodes and the question in the run layout; return episode folders by agent."""
    run_dir.mkdir(parents=True, exist_ok=True)
    q = alignment_question()
    (run_dir / "questions.jsonl").write_text(q.model_dump_json() + "\n", encoding="utf-8")
    (run_dir / "run.json").write_text(json.dumps({"agents": ["eviseek", "single_model", "passive"]}))
    out = {}
    for traj in (eviseek_trajectory(), single_model_trajectory(), passive_trajectory()):
        d = run_dir / "episodes" / traj.agent / traj.question_id
        traj.save(d)
        out[traj.agent] = d
    return out
