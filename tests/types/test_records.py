"""JSON round trips of the shared records; images stored as files, never inlined."""

from __future__ import annotations

import json

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
    Observation,
    Pose,
    Question,
    StepRecord,
    Trajectory,
    Usage,
)


def _img(seed: int) -> Image:
    rng = np.random.default_rng(seed)
    return Image.from_array(rng.integers(0, 255, (12, 16, 3), dtype=np.uint8))


def test_question_round_trip_keeps_contract_and_scene() -> None:
    q = Question(
        id="q1",
        text="Which is taller?",
        contract=AnswerContract(kind="option", options=["red", "blue"]),
        family="Metric Comparison",
        subcategory="Dimensional Size",
        ground_truth="red",
        scene={"objects": [{"name": "red_cube", "size": [0.1, 0.1, 0.2]}]},
    )
    again = Question.model_validate_json(q.model_dump_json())
    assert again == q
    assert "(A) red" in q.contract.describe()


def test_observation_keeps_privileged_arrays_out_of_json() -> None:
    obs = Observation(image=_img(0), pose=Pose(x=1.0), segmentation=np.zeros((12, 16), dtype=np.int32))
    data = json.loads(obs.model_dump_json())
    assert "segmentation" not in data and "depth" not in data
    assert data["image"]["width"] == 16 and data["image"]["height"] == 12


def test_trajectory_saves_images_as_files_and_reloads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first, second = _img(1), _img(2)
    call = ModelCall(
        stage="answer",
        messages=[ChatMessage.user("look", first)],
        config=GenerateConfig(temperature=0.2),
        output="red",
        usage=Usage(input_tokens=10, output_tokens=1, images_sent=1),
    )
    traj = Trajectory(
        episode_id="e1",
        question_id="q1",
        agent="eviseek",
        steps=[
            StepRecord(
                index=1,
                action=Action(name="put_on", args={"object": "a", "target": "b"}),
                feedback=Feedback(operation="put_on", success=False, reason="a is not held"),
                image=second,
                frame_id=1,
            )
        ],
        calls=[call],
        board=[BoardEvent(item=EvidenceItem(id=0, frame_id=1, step_index=1, image=second, demand=0))],
        answer_images=[second],
        result=EpisodeResult(question_id="q1", agent="eviseek", answer="red", correct=True),
    )
    traj.save(tmp_path)
    text = (tmp_path / "trajectory.json").read_text()
    # The pixels live in files, not in the JSON.
    assert len(text) < 20_000
    files = sorted(p.name for p in (tmp_path / "images").iterdir())
    assert len(files) == 2
    loaded = Trajectory.load(tmp_path)
    assert loaded.model_dump() == traj.model_dump()
    pixels = loaded.answer_images[0].array(tmp_path)
    assert np.array_equal(pixels, second.array())


def test_usage_addition_keeps_unknown_apart_from_zero() -> None:
    total = Usage(input_tokens=None, output_tokens=3) + Usage(input_tokens=None, output_tokens=4)
    assert total.input_tokens is None
    assert total.output_tokens == 7
    assert total.total_tokens is None


def test_feedback_summary_is_cut() -> None:
    fb = Feedback(operation="pick_up", success=False, reason="x" * 500)
    assert len(fb.summary()) == 220


def test_tokens_add_reasoning_and_answer_images_count_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from eviseek.types.trajectory import distinct_images

    assert Usage(input_tokens=10, output_tokens=5, reasoning_tokens=7).total_tokens == 22
    assert Usage(input_tokens=10, output_tokens=5).total_tokens == 15
    result = EpisodeResult(question_id="q", agent="a", input_tokens=10, output_tokens=5, reasoning_tokens=7)
    assert result.total_tokens == 22
    a, b = _img(1), _img(2)
    # The same frame attached twice (e.g. a board item and the last view) counts once.
    assert distinct_images([a, b, a, Image.from_array(a.array().copy())]) == 2
    traj = Trajectory(episode_id="e", question_id="q", agent="a", model="m")
    traj.answer_images = [a, b, a]
    question = Question(id="q", text="?", contract=AnswerContract(kind="yes_no"), ground_truth="yes")
    assert traj.make_result(question).images_in_answer == 2
    # Decisions are the calls that choose the next action (seek, Single-model's step, frontier check).
    traj.calls = [ModelCall(stage=st) for st in ("demands", "plan", "seek", "keep", "seek", "answer")]
    assert traj.make_result(question).decisions == 2
    traj.save(tmp_path / "ep")
    loaded = Trajectory.load(tmp_path / "ep")
    assert distinct_images(loaded.answer_images) == 2


def test_step_record_from_step_keeps_every_field_of_the_result() -> None:
    import numpy as np

    from eviseek.types import Action, Feedback, Image, Observation, StepResult
    from eviseek.types.observation import Pose
    from eviseek.types.trajectory import StepRecord

    def frame(i: int) -> Observation:
        return Observation(image=Image.from_array(np.full((4, 4, 3), i, np.uint8)), frame_id=i)

    obs = frame(9).model_copy(update={"pose": Pose(x=1.0), "action_frames": [frame(7), frame(8)]})
    ok = StepResult(observation=obs, feedback=Feedback(operation="put", success=True))
    rec = StepRecord.from_step(3, Action(name="put"), ok, pose=Pose(x=0.5), intent="i", subtask=2, decision=1)
    assert (rec.index, rec.frame_id, rec.true_pose, rec.pose) == (3, 9, Pose(x=1.0), Pose(x=0.5))
    assert rec.action_frame_ids == [7, 8] and len(rec.action_frames) == 2 and rec.image is obs.image
    failed = StepResult(observation=obs, feedback=Feedback(operation="zoom", success=False, reason="no"))
    gone = StepRecord.from_step(4, Action(name="zoom"), failed, keep_failed_view=False)
    assert gone.image is None and gone.frame_id == -1
    assert StepRecord.from_step(4, Action(name="zoom"), failed).frame_id == 9
