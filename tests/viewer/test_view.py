"""What the page will show, decided from the records (no HTML involved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.types import BoardEvent, EvidenceItem, Trajectory
from eviseek.viewer import ImageSourcer, build_episode_view, load_trajectory
from eviseek.viewer.view import NO_SUBTASK_COLOR, EpisodeView
from tests.viewer.conftest import episode
from tests.viewer.synthetic import NOTE_WITH_MARKUP, alignment_question


def _view(run: Path, agent: str, tmp_path: Path, *, question: bool = True) -> EpisodeView:
    traj, base = load_trajectory(episode(run, agent))
    sourcer = ImageSourcer(base, tmp_path / "page.html")
    return build_episode_view(traj, sourcer, alignment_question() if question else None)


def test_eviseek_frames_board_and_answer_images(pristine_run: Path, tmp_path: Path) -> None:
    v = _view(pristine_run, "eviseek", tmp_path)
    assert [f.frame_id for f in v.frames] == [0, 1, 2, 3, 4, 5, 6]
    assert v.frames[0].label == "start" and v.frames[0].step is None
    assert v.kept_frame_ids == [4, 6]  # item 2 (frame 2) was added, then removed at step 4
    assert [f.frame_id for f in v.frames if f.in_answer] == [4, 6]
    assert all(f.image.src and f.image.src.startswith("data:image/jpeg;base64,") for f in v.frames)
    failed = v.frames[5]
    assert failed.action == "move_right" and failed.success is False
    assert failed.feedback is not None and "blocked by the table edge" in failed.feedback
    assert (failed.intent, failed.subtask) == ("ORBIT", 2)

    kept = [b for b in v.board if b.removed_at is None]
    removed = [b for b in v.board if b.removed_at is not None]
    assert [b.id for b in kept] == [1, 3] and [(b.id, b.removed_at) for b in removed] == [(2, 4)]
    item3 = kept[1]
    # The later "bind" event linked item 3 to demand 2 and rewrote its note.
    assert item3.demand == 2 and item3.note == "view along the line: no deviation"
    assert item3.demand_text == "whether the middle object deviates from the line"
    assert kept[0].note == NOTE_WITH_MARKUP and kept[0].in_answer
    assert [h.kind for h in v.board_history] == ["add", "add", "remove", "add", "bind"]

    assert [(a.label, a.kept) for a in v.answer_images] == [("frame 4", True), ("frame 6", True)]
    assert [(d.id, d.subtask_ids, d.kept_item_ids) for d in v.demands] == [(1, [1], [1]), (2, [2, 3], [3])]


def test_subtasks_statuses_and_colour_bars(pristine_run: Path, tmp_path: Path) -> None:
    v = _view(pristine_run, "eviseek", tmp_path)
    assert [(s.id, s.status, s.known_status) for s in v.subtasks] == [
        (1, "done", True),
        (2, "timed_out", True),
        (3, "pending", True),
    ]
    colours = [s.color for s in v.subtasks]
    assert len(set(colours)) == 3 and NO_SUBTASK_COLOR not in colours
    by_id = {s.id: s.color for s in v.subtasks}
    for f in v.frames[1:]:
        assert f.color == by_id[f.subtask]  # the bar under each frame names its subtask
    assert v.frames[0].color == NO_SUBTASK_COLOR
    assert v.subtasks[1].demand_text == "whether the middle object deviates from the line"


def test_outcome_cost_mode_and_events(pristine_run: Path, tmp_path: Path) -> None:
    v = _view(pristine_run, "eviseek", tmp_path)
    o = v.outcome
    assert (o.answer, o.truth, o.correct, o.scored_here) == ("yes", "yes", True, False)
    assert (o.support, o.support_label) == (1.0, "full")
    assert v.mode == "active"
    assert (v.cost.steps, v.cost.calls, v.cost.total_tokens, v.cost.images_in_answer) == (6, 6, 1176, 2)
    assert v.cost.images_sent == 7  # summed over the recorded calls
    assert [e.kind for e in v.events] == ["parse_failure", "subtask_timeout"]
    assert '"raw": "I think ORBIT is best"' in v.events[0].data
    assert [c.stage for c in v.calls] == ["demands", "plan", "seek", "seek", "keep", "answer"]
    # Each image marker sits on a line of its own (it ran into the text: "[image 1]Question:").
    assert v.calls[-1].prompt[1].text == "Answer from the board.\n[image 1]\n[image 2]"
    assert v.calls[-1].prompt[1].images == 2
    assert v.question.contract_kind == "yes_no" and v.question.options == ["yes", "no"]


def test_single_model_and_passive_have_no_plan_or_board(pristine_run: Path, tmp_path: Path) -> None:
    single = _view(pristine_run, "single_model", tmp_path)
    assert not single.has_plan and single.board == [] and single.kept_frame_ids == []
    assert [f.frame_id for f in single.frames if f.in_answer] == [2, 3, 4]
    assert all(f.color == NO_SUBTASK_COLOR for f in single.frames)
    assert single.outcome.correct is False and single.outcome.support_label == "partial"
    assert single.mode is None

    passive = _view(pristine_run, "passive", tmp_path)
    assert len(passive.frames) == 1 and passive.frames[0].in_answer
    assert passive.mode == "passive" and passive.cost.steps == 0
    assert passive.outcome.support_label == "none"


def test_malformed_plan_is_a_warning_with_the_raw_record(pristine_run: Path, tmp_path: Path) -> None:
    saved, base = load_trajectory(episode(pristine_run, "eviseek"))
    data = saved.model_dump(mode="json")
    data["plan"]["subtasks"].append({"goal": "no id here"})
    data["plan"]["demands"] = "one demand"
    traj = Trajectory.model_validate(data)  # loads: the plan is kept as it was, with what is wrong
    v = build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"))
    assert any("plan['subtasks'][3]: id: Field required" in w for w in v.warnings)
    assert any("plan['demands'] is a str" in w for w in v.warnings)
    assert v.plan_json is not None and '"no id here"' in v.plan_json
    assert [s.id for s in v.subtasks] == [1, 2, 3]  # the readable entries still show


def test_unscored_result_is_scored_with_the_shared_scorer(pristine_run: Path, tmp_path: Path) -> None:
    traj, base = load_trajectory(episode(pristine_run, "single_model"))
    assert traj.result is not None
    traj.result = traj.result.model_copy(update={"correct": None, "score": None, "raw_answer": "Yes."})
    v = build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"), alignment_question())
    assert (v.outcome.correct, v.outcome.score, v.outcome.scored_here) == (True, 1.0, True)
    # Without the question there is nothing to score against: the page says "not scored".
    v2 = build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"))
    assert v2.outcome.correct is None and not v2.outcome.scored_here and v2.outcome.truth == "yes"


def test_question_of_another_episode_is_refused(pristine_run: Path, tmp_path: Path) -> None:
    traj, base = load_trajectory(episode(pristine_run, "passive"))
    other = alignment_question().model_copy(update={"id": "other-1"})
    with pytest.raises(ValueError, match="does not belong to this trajectory"):
        build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"), other)


def test_missing_image_file_and_mismatched_answer_ids(run_copy: Path, tmp_path: Path) -> None:
    traj, base = load_trajectory(episode(run_copy, "single_model"))
    assert traj.steps[0].image is not None and traj.steps[0].image.path is not None
    (base / traj.steps[0].image.path).unlink()
    traj.answer_frame_ids = [3]
    v = build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"))
    assert v.frames[1].image.src is None
    assert v.frames[1].image.missing == f"file not found: {traj.steps[0].image.path}"
    assert any("3 answer images but 1 answer frame ids" in w for w in v.warnings)
    assert [a.label for a in v.answer_images] == ["frame 3", "frame unknown", "frame unknown"]


def test_cost_without_a_result_is_summed_from_calls(pristine_run: Path, tmp_path: Path) -> None:
    traj, base = load_trajectory(episode(pristine_run, "eviseek"))
    traj.result = None
    v = build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"))
    assert not v.cost.from_result and not v.outcome.recorded
    assert (v.cost.steps, v.cost.calls) == (6, 6)
    assert v.cost.input_tokens == 120 + 150 + 200 + 210 + 90 + 300
    assert v.mode == "active"  # falls back to the plan's mode


def test_in_memory_trajectory_and_board_frame_without_step(tmp_path: Path) -> None:
    from tests.viewer.synthetic import frame

    traj = Trajectory(episode_id="e", question_id="q", agent="x", initial_image=frame(1))
    traj.board.append(BoardEvent(item=EvidenceItem(id=1, frame_id=9, step_index=9)))
    v = build_episode_view(traj, ImageSourcer(tmp_path, tmp_path / "p.html"))
    assert v.frames[0].image.src is not None  # pixels in memory, never saved: still shown
    assert v.warnings == ["board keeps frame 9, which no step recorded"]


def test_reference_images_and_repeated_frame_ids(pristine_run: Path, tmp_path: Path) -> None:
    from tests.viewer.synthetic import frame

    traj, base = load_trajectory(episode(pristine_run, "eviseek"))
    # A failed action that leaves the camera still re-reports the previous frame id.
    traj.steps[4] = traj.steps[4].model_copy(update={"frame_id": 4})
    traj.answer_images = [frame(50), *traj.answer_images]
    traj.answer_frame_ids = [-1, *traj.answer_frame_ids]
    q = alignment_question().model_copy(update={"reference_images": [frame(50)]})
    v = build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"), q)
    assert [(f.label, f.kept) for f in v.frames if f.frame_id == 4] == [("step 4", False), ("step 5", True)]
    assert [a.label for a in v.answer_images] == ["task reference image", "frame 4", "frame 6"]
    assert v.answer_images[0].image.src == v.question.reference_images[0].src  # same pixels, same thumbnail


def test_image_markers_are_on_lines_of_their_own() -> None:
    from eviseek.types import ChatMessage, GenerateConfig, ModelCall
    from eviseek.viewer.view import _call_view
    from tests.viewer.synthetic import frame

    msg = ChatMessage.user(frame(1), "Question: is it red?", frame(2), "\nThen answer.")
    call = ModelCall(stage="passive", model="m", messages=[msg], config=GenerateConfig(), output="x")
    assert _call_view(0, call).prompt[0].text == "[image 1]\nQuestion: is it red?\n[image 2]\nThen answer."


def test_frames_rendered_during_an_action_are_shown_on_its_step(pristine_run: Path, tmp_path: Path) -> None:
    from tests.viewer.synthetic import frame

    traj, base = load_trajectory(episode(pristine_run, "eviseek"))
    slide = [frame(60 + k) for k in range(3)]
    traj.steps[2] = traj.steps[2].model_copy(
        update={"action_frames": slide, "action_frame_ids": [31, 32, 33]}
    )
    v = build_episode_view(traj, ImageSourcer(base, tmp_path / "p.html"), alignment_question())
    step = next(f for f in v.frames if f.step == traj.steps[2].index)
    assert step.action_frame_ids == [31, 32, 33]
    assert [a.src is not None for a in step.action_frames] == [True, True, True]
    assert all(not f.action_frames for f in v.frames if f is not step)
