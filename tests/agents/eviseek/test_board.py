"""The evidence board: provenance, events, capacity selection and rebuilding from a trajectory."""

from __future__ import annotations

import numpy as np

from eviseek.agents.eviseek.board import EvidenceBoard
from eviseek.types import Feedback, Image, Trajectory


def img(v: int) -> Image:
    return Image.from_array(np.full((4, 4, 3), v, dtype=np.uint8))


def test_add_records_provenance_and_events_and_bind_links_demands() -> None:
    traj = Trajectory(episode_id="e", question_id="q", agent="eviseek")
    board = EvidenceBoard(traj)
    item = board.add(
        frame_id=3,
        step_index=3,
        image=img(1),
        outcome=Feedback(operation="turn_left"),
        intent="SWEEP",
        subtask=1,
        demand=2,
        note=" the cube's top ",
    )
    assert (item.intent, item.subtask, item.demand, item.note) == ("SWEEP", 1, 2, "the cube's top")
    board.bind(1, 2, at_step=4)
    assert [e.kind for e in traj.board] == ["add", "bind"]
    rebuilt = EvidenceBoard.from_trajectory(traj)
    assert [it.frame_id for it in rebuilt.items] == [3]


def test_selection_respects_capacity_and_shares_it_between_demands() -> None:
    board = EvidenceBoard()
    for i in range(8):
        board.add(
            frame_id=i, step_index=i, image=img(i), outcome=None, intent="SWEEP", subtask=1, demand=1, note=""
        )
    board.add(
        frame_id=20, step_index=20, image=img(20), outcome=None, intent="ORBIT", subtask=2, demand=2, note=""
    )
    chosen = board.select(4)
    assert len(chosen) == 4
    assert 20 in [it.frame_id for it in chosen]  # demand 2 keeps its only item
    assert [it.step_index for it in chosen] == sorted(it.step_index for it in chosen)


def test_repeated_frames_are_shown_once() -> None:
    board = EvidenceBoard()
    board.add(
        frame_id=5, step_index=5, image=img(5), outcome=None, intent="A", subtask=1, demand=1, note="left"
    )
    board.add(
        frame_id=5, step_index=5, image=img(5), outcome=None, intent="B", subtask=2, demand=1, note="right"
    )
    chosen = board.select(20)
    assert len(chosen) == 1 and chosen[0].note == "left / right"
