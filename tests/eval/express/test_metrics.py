"""EXPRESS-Bench's metrics: path length, d_T on the house's grid, C / C* / E_path as its formulas say."""

from __future__ import annotations

import math

import pytest

from eviseek.eval.express import ExpressGrade, episode_nav, express_row
from eviseek.types import Action, EpisodeResult, Feedback, Pose, StepRecord, Trajectory
from tests.envs.house.conftest import hand_question, two_rooms


def _walk(poses: list[Pose], *, correct: bool = True) -> Trajectory:
    steps = [
        StepRecord(
            index=i + 1,
            action=Action(name="move_forward"),
            feedback=Feedback(operation="move_forward", success=True),
            true_pose=p,
        )
        for i, p in enumerate(poses[1:])
    ]
    return Trajectory(
        episode_id="e",
        question_id="house-hand-0",
        agent="nav",
        initial_pose=poses[0],
        steps=steps,
        result=EpisodeResult(question_id="house-hand-0", agent="nav", answer="red", correct=correct),
    )


def test_path_length_and_terminal_distance() -> None:
    q = hand_question(two_rooms())
    poses = [Pose(x=1.0 + 0.25 * k, y=2.0, z=1.5) for k in range(17)]  # 4 m east, through the door
    nav = episode_nav(_walk(poses), q)
    assert nav.path_m == pytest.approx(4.0) and nav.end == (5.0, 2.0)
    # From (5, 2) to the cup on the desk at (6.4, 2): the nearest free cell in front of the desk.
    assert nav.d_T == pytest.approx(6.1 - 0.2 - 5.0, abs=0.1)
    stay = episode_nav(_walk(poses[:1]), q)
    assert stay.path_m == 0.0 and stay.d_T is not None and stay.d_T > nav.d_T + 3.5


def test_c_c_star_and_e_path_follow_express_benchs_formulas() -> None:
    q = hand_question(two_rooms())  # shortest path l = 5.0 m (metadata)
    long_walk = _walk(
        [Pose(x=1.0 + 0.25 * k, y=2.0, z=1.5) for k in range(17)]
        + [Pose(x=5.0, y=2.0 + 0.25 * k, z=1.5) for k in range(1, 25)]
    )
    short_walk = _walk([Pose(x=1.0 + 0.25 * k, y=2.0, z=1.5) for k in range(17)])
    p_long = episode_nav(long_walk, q).path_m
    assert p_long == pytest.approx(10.0)
    g1 = ExpressGrade(agent="nav", question_id=q.id, grounding=1.0, score=4)
    g2 = ExpressGrade(agent="nav", question_id=q.id, grounding=0.5, score=5)
    row = express_row("nav", [(long_walk, q, g1), (short_walk, q, g2), (short_walk, q, None)])
    c1, c2 = 100 * 1.0 * 4 / 5, 100 * 0.5 * 5 / 5
    assert pytest.approx((c1 + c2) / 2) == row.C
    assert row.C_star == pytest.approx((80 + 100) / 2)
    # E_path weights C_i by l / max(p, l): 5/10 for the long walk, 1 for the 4 m one (p < l).
    assert row.E_path == pytest.approx((c1 * 0.5 + c2 * 1.0) / 2)
    assert (row.n, row.graded) == (3, 2)
    assert row.exact == 100.0 and row.n_exact == 3
    assert row.d_T is not None and math.isfinite(row.d_T) and not row.question_only


def test_a_system_that_never_moved_nor_looked_is_question_only() -> None:
    q = hand_question(two_rooms())
    traj = _walk([Pose(x=1.0, y=2.0, z=1.5)])
    row = express_row(
        "blind", [(traj, q, ExpressGrade(agent="blind", question_id=q.id, grounding=0.0, score=5))]
    )
    assert row.question_only and row.C_star == 100.0 and row.C == 0.0
