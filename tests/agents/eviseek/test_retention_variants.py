"""EviSeek's issue-17 switches: split retention (seeker keep + curator), the guarded answer
context and the LOOK_UP intent. The guarded context and LOOK_UP are on by default (neither lowered
C on the test split); split retention is off (it lowered C on the dev split)."""

from __future__ import annotations

from pathlib import Path

from eviseek.agents import make_agent
from eviseek.agents.eviseek.config import EviSeekConfig
from eviseek.agents.eviseek.intents import IntentLibrary
from eviseek.envs import as_async
from eviseek.types import Question
from eviseek.viewer import ImageSourcer, build_episode_view
from tests.agents.eviseek.test_agent import run, seek_by_subtask, standard_script
from tests.agents.gridworld import GridWorld


def split_seek():  # type: ignore[no-untyped-def]
    """Fresh seek replies (the helper counts its calls)."""
    return seek_by_subtask(
        {
            1: [
                {"intent": "RISE_TOPDOWN", "args": {"degrees": 45}},
                {"intent": "DONE", "keep": True, "keep_note": "both objects from above"},
            ],
            2: [{"intent": "APPROACH", "target": "red cube", "args": {"steps": 2}}, {"intent": "DONE"}],
        }
    )


async def test_split_retention_seeker_keeps_the_current_view_and_the_curator_picks_frames(
    question: Question,
) -> None:
    script = standard_script(seek=split_seek(), curate=lambda cfg: {"frames": [1], "note": "on the way"})
    traj = await run(question, script, retention="split")
    # No merged keeper call: one curator call per multi-step intent.
    assert [c.stage for c in traj.calls] == [
        "demands",
        "plan",
        "seek",
        "curate",
        "seek",
        "seek",
        "curate",
        "seek",
        "answer",
    ]
    # The curator saw the intermediate frames only (RISE_TOPDOWN: 5 of 6, evenly 4; APPROACH: 1 of 2).
    assert script.calls("curate")[0][0].metadata["candidate_frame_ids"] == [1, 2, 4, 5]
    assert script.calls("curate")[1][0].metadata["candidate_frame_ids"] == [7]
    adds = [e.item for e in traj.board if e.kind == "add"]
    assert [(i.frame_id, i.step_index, i.intent, i.subtask, i.demand, i.note) for i in adds] == [
        (1, 1, "RISE_TOPDOWN", 1, 1, "on the way"),
        (6, 6, "RISE_TOPDOWN", 1, 1, "both objects from above"),  # the seeker's keep at DONE
        (7, 7, "APPROACH", 2, 2, "on the way"),
    ]
    assert traj.answer_frame_ids == [1, 6, 7]
    assert [d.kept_current for d in traj.plan.decisions] == [False, True, False, False]
    # The seek prompt asks for the keep field, and says so in the metadata.
    cfg, msgs = script.calls("seek")[0]
    assert cfg.metadata["ask_keep"] is True and '"keep_note"' in msgs[0].text()


async def test_merged_retention_ignores_a_seek_keep_and_does_not_ask_for_it(question: Question) -> None:
    script = standard_script(seek=split_seek())
    traj = await run(question, script)
    assert [e.item.frame_id for e in traj.board if e.kind == "add"] == [6, 8]  # the keeper's picks
    cfg, msgs = script.calls("seek")[0]
    assert "ask_keep" not in cfg.metadata and '"keep_note"' not in msgs[0].text()
    assert "curate" not in [c.stage for c in traj.calls]


async def test_out_of_range_curator_picks_are_logged_and_dropped(question: Question) -> None:
    script = standard_script(seek=split_seek(), curate=lambda cfg: {"frames": [9]})
    traj = await run(question, script, retention="split")
    assert [e.item.frame_id for e in traj.board if e.kind == "add"] == [6]
    assert [e.kind for e in traj.events].count("curate_repaired") == 2


def _empty_board_script():  # type: ignore[no-untyped-def]
    return standard_script(keep=lambda cfg: {"keep": False})


async def test_empty_board_answers_blind_with_the_guard_off(question: Question) -> None:
    script = _empty_board_script()
    traj = await run(question, script, guarded_answer=False)
    assert traj.answer_images == [] and "No evidence was retained." in script.calls("answer")[0][1][-1].text()
    kinds = [e.kind for e in traj.events]
    assert "empty_board" in kinds and "guarded_context" not in kinds


async def test_guarded_answer_shows_the_latest_and_first_view_as_unretained(
    question: Question, tmp_path: Path
) -> None:
    script = _empty_board_script()
    traj = await run(question, script, guarded_answer=True)
    assert traj.answer_frame_ids == [8, 0]
    assert traj.answer_images[0] == traj.steps[-1].image and traj.answer_images[1] == traj.initial_image
    text = script.calls("answer")[0][1][-1].text()
    assert "Unretained context (view 8, the most recent view, after step 8" in text
    assert "Unretained context (view 0, the first view of the episode" in text
    (event,) = [e for e in traj.events if e.kind == "guarded_context"]
    assert event.data == {"frame_ids": [8, 0]} and "empty_board" in [e.kind for e in traj.events]
    # The viewer labels the two answer images as unretained context.
    view = build_episode_view(traj, ImageSourcer(tmp_path, tmp_path / "page.html"))
    assert [a.label for a in view.answer_images] == [
        "frame 8, unretained context (the board was empty)",
        "frame 0, unretained context (the board was empty)",
    ]


async def test_guarded_answer_with_no_step_shows_the_first_view_once(question: Question) -> None:
    script = standard_script(seek=seek_by_subtask({}), keep=lambda cfg: {"keep": False})
    traj = await run(question, script, guarded_answer=True)
    assert traj.steps == [] and traj.answer_frame_ids == [0]


async def test_guarded_answer_leaves_a_non_empty_board_alone(question: Question) -> None:
    traj = await run(question, standard_script(), guarded_answer=True)
    assert traj.answer_frame_ids == [6, 8] and "guarded_context" not in [e.kind for e in traj.events]


def test_defaults_are_merged_retention_with_the_guard_and_look_up_on() -> None:
    cfg = EviSeekConfig()
    assert (cfg.retention, cfg.guarded_answer, cfg.look_up) == ("merged", True, True)


def test_look_up_is_offered_only_when_switched_on_and_pitch_up_is_legal() -> None:
    legal = GridWorld().legal_actions()
    assert "LOOK_UP" not in IntentLibrary(legal).names()
    lib = IntentLibrary(legal, look_up=True)
    compiled, why = lib.compile("look up", {"degrees": 45, "back": 2}, remaining=30)
    assert why is None and compiled is not None
    assert [a.name for a in compiled.actions] == ["move_backward"] * 2 + ["turn_up"] * 3
    compiled, _ = lib.compile("LOOK_UP", {"back": 9}, remaining=30)
    assert compiled is not None and compiled.notes == ["back 9 clamped to 4"]
    # Coming down first (for a side view after a high start), when moving down is legal.
    compiled, _ = lib.compile("LOOK_UP", {"degrees": 45, "back": 2, "down": 2}, remaining=30)
    assert compiled is not None
    assert [a.name for a in compiled.actions] == ["move_down"] * 2 + ["move_backward"] * 2 + ["turn_up"] * 3
    no_down = [s for s in legal if s.name != "move_down"]
    spec = next(s for s in IntentLibrary(no_down, look_up=True).offered() if s.name == "LOOK_UP")
    assert "down" not in [p.name for p in spec.params]
    no_pitch = [s for s in legal if s.name != "turn_up"]
    assert "LOOK_UP" not in IntentLibrary(no_pitch, look_up=True).names()


async def test_look_up_runs_in_an_episode(question: Question) -> None:
    script = standard_script(seek=seek_by_subtask({1: [{"intent": "LOOK_UP", "args": {"degrees": 30}}]}))
    traj = await make_agent("eviseek:look_up").run(as_async(GridWorld()), question, script.model())
    assert "LOOK_UP" in traj.plan.intents
    assert [s.action.name for s in traj.steps[:2]] == ["turn_up", "turn_up"]


async def test_split_retention_offers_the_last_frame_of_an_intent_the_budget_cut_off(
    question: Question,
) -> None:
    # RISE_TOPDOWN needs 6 steps; with a budget of 4 it is cut, and no seeker decision follows it,
    # so the curator sees its last frame (frame 4) among the candidates and can keep it.
    script = standard_script(seek=split_seek(), curate=lambda cfg: {"frames": [4], "note": "the last view"})
    traj = await run(question, script, retention="split", budget=4)
    (call,) = script.calls("curate")
    assert call[0].metadata["candidate_frame_ids"][-1] == 4
    assert "will not look at it again" in call[1][-1].text()
    assert [e.item.frame_id for e in traj.board if e.kind == "add"] == [4]
    assert "curate_last_frame" in [e.kind for e in traj.events]


def test_paper_presets() -> None:
    paper = make_agent("eviseek:paper")
    assert (paper.config.retention, paper.config.guarded_answer, paper.config.look_up) == (
        "split",
        False,
        False,
    )
    assert not paper.config.coverage and not paper.config.coverage_control
    cov = make_agent("eviseek:paper_coverage")
    assert (cov.config.retention, cov.config.guarded_answer, cov.config.look_up) == ("split", False, False)
    assert cov.config.coverage_control
    # A preset and a switch combine; the switch given last wins.
    assert make_agent("eviseek:paper+look_up=true").config.look_up is True
    assert make_agent("passive:paper").config.reference_images is False
