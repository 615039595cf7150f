"""The reference policy's pixel solvers for the newer tabletop subcategories, on real renders.

Scenes come from the tuning seeds the thresholds were set on (300 and 301, outside the dev split's
1000 and the test split's 2000). The camera follows the policy's own viewing routine through the
environment with privileged access off, and only the rendered pixels reach the solver, so each
test checks the routine and the solver together.
"""

from __future__ import annotations

import numpy as np
import pytest

from eviseek.envs.tabletop.env import TabletopEnv
from eviseek.envs.tabletop.generate import generate_questions
from eviseek.models.reference.atomic import DRAPE_PLAN, JAR_PLAN, SIDE_PLAN, TURN_ROUND_PLAN
from eviseek.models.reference.intents import seek_intent
from eviseek.models.reference.policy import PoseEstimate, routine_for
from eviseek.models.reference.solve import solve
from eviseek.models.reference.task import HEIGHTS_SHOW, Task, read_task
from eviseek.models.reference.vision import analyse
from eviseek.types import Action, Image


@pytest.mark.slow
def test_category_ambiguity_counts_cubes_from_the_side_not_from_above() -> None:
    questions = generate_questions(4, 300, subcategories=["category_ambiguity"], render_images=False)
    env = TabletopEnv(privileged=False)
    right_side = right_top = 0
    try:
        for q in questions:
            task = read_task(q.text, {"answer_kind": "integer"}, q.guidance)
            assert task.tall_lookalikes and routine_for(task) == "side"
            obs, _ = env.reset(options={"question": q})
            top = analyse(obs.image)
            for name in SIDE_PLAN:
                obs = env.step(Action(name=name)).observation
            side = analyse(obs.image)
            right_side += solve(task, [top, side]).answer == q.ground_truth
            right_top += solve(task, [top]).answer == q.ground_truth
    finally:
        env.close()
    # From above every tall block passes for a cube; from the side 3 of these 4 come out right.
    assert right_side >= 3
    assert right_top == 0


@pytest.mark.slow
def test_deformable_reads_the_hidden_shape_from_the_cloth_seen_from_above() -> None:
    questions = generate_questions(4, 301, subcategories=["deformable"], render_images=False)
    env = TabletopEnv(privileged=False)
    right = 0
    try:
        for q in questions:
            task = read_task(q.text, {"answer_kind": "option", "options": q.contract.options})
            assert task.kind == "covered" and routine_for(task) == "drape"
            obs, _ = env.reset(options={"question": q})
            start = analyse(obs.image)
            for name in DRAPE_PLAN:
                obs = env.step(Action(name=name)).observation
            right += solve(task, [start, analyse(obs.image)]).answer == q.ground_truth
    finally:
        env.close()
    # Two cubes, a ball and a cylinder among four offered shapes: chance would get one right.
    assert right >= 3


@pytest.mark.slow
def test_material_transparency_reads_inside_or_behind_the_jar_from_above() -> None:
    questions = [
        *generate_questions(2, 300, subcategories=["material_transparency"], render_images=False),
        *generate_questions(2, 301, subcategories=["material_transparency"], render_images=False),
    ]
    assert {q.ground_truth for q in questions} == {"yes", "no"}
    env = TabletopEnv(privileged=False)
    try:
        for q in questions:
            task = read_task(q.text, {"answer_kind": "yes_no", "options": ["yes", "no"]})
            assert task.kind == "in_jar" and routine_for(task) == "jar"
            obs, _ = env.reset(options={"question": q})
            start = analyse(obs.image)
            assert solve(task, [start]).confidence == 0.0  # from the side the glass misleads
            for name in JAR_PLAN:
                obs = env.step(Action(name=name)).observation
            assert solve(task, [start, analyse(obs.image)]).answer == q.ground_truth
    finally:
        env.close()


@pytest.mark.slow
def test_reflection_authoring_is_answered_by_turning_round_not_by_size_in_the_first_view() -> None:
    """Since generator version 9 apparent size in the first view does not tell a reflection from
    an object seen directly; the policy turns round, where a reflected target stands near by."""
    questions = generate_questions(4, 300, subcategories=["reflection_authoring"], render_images=False)
    assert [q.ground_truth for q in questions] == ["yes", "no", "no", "yes"]
    env = TabletopEnv(privileged=False)
    try:
        for q in questions:
            task = read_task(q.text, {"answer_kind": "yes_no", "options": ["yes", "no"]})
            assert task.kind == "in_mirror" and routine_for(task) == "turn_round"
            obs, _ = env.reset(options={"question": q})
            views = [analyse(obs.image)]
            for _ in range(12):  # turn round in place, 15 degrees a step
                obs = env.step(Action(name="turn_left")).observation
                views.append(analyse(obs.image))
            assert solve(task, views).answer == q.ground_truth, q.id
    finally:
        env.close()


def test_white_balance_against_the_tabletop_recovers_colours_under_a_tinted_dim_light() -> None:
    tint = np.array([0.55, 0.42, 0.3])  # a dim, warm light (the tabletop is the white reference)
    img = np.zeros((120, 160, 3), dtype=np.float64)
    img[:, :] = (220, 192, 151)
    img[40:60, 30:50] = (230, 120, 200)  # a pink object
    img[40:60, 100:120] = (40, 70, 230)  # a blue one
    lit = Image.from_array((img * tint).astype(np.uint8))
    plain, fixed = analyse(lit), analyse(lit, balance=True)
    assert fixed.largest("pink") is not None and fixed.largest("blue") is not None
    assert plain.largest("pink") is None  # under the warm light it reads as another colour
    task = read_task("How many pink cubes are on the table? The light has since changed.", {})
    assert task.light_changed


def test_a_count_asked_as_options_answers_with_an_offered_number() -> None:
    task = read_task(
        "How many red cubes did it pass within 10 cm during its drive? Answer 0, 1, 2, or 3.",
        {"answer_kind": "option", "options": ["0", "1", "2", "3"]},
    )
    img = np.zeros((120, 160, 3), dtype=np.uint8)
    img[:, :] = (220, 192, 151)
    for k in range(5):  # five red things in view: more than any option
        img[20 + 18 * k : 30 + 18 * k, 20:30] = (220, 30, 30)
    view = analyse(Image.from_array(img))
    assert solve(task, [view]).answer == "3"


def _reads(text: str, options: list[str]) -> Task:
    return read_task(text, {"answer_kind": "option", "options": options})


def test_mirror_and_robot_questions_are_read_as_their_own_kinds() -> None:
    corr = _reads(
        "You can see a mirror and three pink pyramids. Which of the three pyramids is the one you see "
        "reflected in the mirror: the left, middle, or right one?",
        ["left", "middle", "right"],
    )
    closer = _reads(
        "In the mirror you can see two objects: object A (the brown cylinder) and object B (the red "
        "ball). In the real world, which of them is closer to the spot where you started, A or B?",
        ["A", "B"],
    )
    path = _reads(
        "The black robot drove across the table in straight lines. The reference images show it, from "
        "where you stand now, at its start and at the two places where it turned; it stopped where it "
        "stands now. How many cyan pyramids did it pass within 10 cm during its drive? Answer 0, 1, 2, or 3.",
        ["0", "1", "2", "3"],
    )
    assert (corr.kind, routine_for(corr)) == ("reflected", "first")
    assert (closer.kind, routine_for(closer), closer.prefer_smaller) == ("mirror_closer", "turn_round", True)
    assert [o.name for o in closer.objects] == ["brown_cylinder", "red_ball"]
    assert (path.kind, routine_for(path), [o.name for o in path.objects]) == (
        "path_count",
        "first",
        ["cyan_pyramid"],
    )


def test_a_side_view_noted_by_an_earlier_stage_marks_a_count_of_cubes_among_taller_blocks() -> None:
    task = read_task("How many blue cubes are on the table?", {"answer_kind": "integer"})
    assert not task.tall_lookalikes  # the keeper and the answerer get no advice text
    task.notes = f"Side view: each box of the named colour from the side, {HEIGHTS_SHOW}"
    assert task.tall_lookalikes


def test_eviseek_comes_down_for_the_side_view_when_look_up_can_lower_the_camera() -> None:
    task = read_task(
        "How many blue cubes are on the table?",
        {"answer_kind": "integer"},
        "Some blocks are about twice as tall: look at the objects from the side.",
    )
    assert routine_for(task) == "side"
    view = analyse(Image.from_array(np.full((120, 160, 3), (220, 192, 151), dtype=np.uint8)))
    look_up = {"name": "LOOK_UP", "params": [{"name": "degrees"}, {"name": "back"}, {"name": "down"}]}
    rise = {"name": "RISE_TOPDOWN", "params": [{"name": "degrees"}]}
    pose = PoseEstimate(z=1.0, pitch=-90.0)
    first = seek_intent("side", task, view, pose, ["RISE_TOPDOWN", "LOOK_UP"], [], 20, [rise, look_up])
    assert (first.intent, first.args) == ("LOOK_UP", {"degrees": 45, "back": 2, "down": 2})
    assert seek_intent("side", task, view, pose, ["LOOK_UP"], ["LOOK_UP: ok"], 13, [look_up]).intent == "DONE"
    # Without a way down (LOOK_UP offered without "down") the routine keeps the overhead count.
    no_down = {"name": "LOOK_UP", "params": [{"name": "degrees"}, {"name": "back"}]}
    offered = ["RISE_TOPDOWN", "LOOK_UP"]
    start = seek_intent("side", task, view, PoseEstimate(), offered, [], 20, [rise, no_down])
    assert start.intent == "RISE_TOPDOWN"


@pytest.mark.slow
def test_correspondence_answers_a_position_from_the_first_view() -> None:
    """The first-view solver answers one of the three positions. It is no better than chance on
    balanced questions: 2 of 6 here (seed 300, generator version 9, where left, middle and right
    take turns); it scored 4 of 6 or more on version 8's draws, where "middle" came out less often
    than a third. Kept as a check that it runs and answers in form, not as a claim of skill."""
    questions = generate_questions(6, 300, subcategories=["correspondence"], render_images=False)
    env = TabletopEnv(privileged=False)
    answers = []
    try:
        for q in questions:
            task = _reads(q.text, ["left", "middle", "right"])
            obs, _ = env.reset(options={"question": q})
            answers.append(solve(task, [analyse(obs.image)]).answer)
    finally:
        env.close()
    assert set(answers) <= {"left", "middle", "right"}


@pytest.mark.slow
def test_mirror_spatial_relations_are_judged_on_the_objects_themselves_after_turning_round() -> None:
    questions = generate_questions(6, 300, subcategories=["mirror_spatial_relations"], render_images=False)
    env = TabletopEnv(privileged=False)
    right = 0
    try:
        for q in questions:
            task = _reads(q.text, ["A", "B"])
            obs, _ = env.reset(options={"question": q})
            views = [analyse(obs.image)]
            assert solve(task, views).confidence == 0.0  # in the mirror only: no real distances yet
            for name in TURN_ROUND_PLAN:
                views.append(analyse(env.step(Action(name=name)).observation.image))
            right += solve(task, views).answer == q.ground_truth
    finally:
        env.close()
    assert right >= 5


@pytest.mark.slow
def test_agent_observation_counts_along_the_path_from_the_reference_images() -> None:
    questions = generate_questions(6, 300, subcategories=["agent_observation"], render_images=True)
    env = TabletopEnv(privileged=False)
    right = 0
    try:
        for q in questions:
            task = _reads(q.text, ["0", "1", "2", "3"])
            obs, _ = env.reset(options={"question": q})
            refs = [analyse(r) for r in q.reference_images]
            assert len(refs) == 3
            verdict = solve(task, [*refs, analyse(obs.image)], references=[True, True, True, False])
            right += verdict.answer == q.ground_truth
    finally:
        env.close()
    # Chance is 1.5 of 6 (four offered counts).
    assert right >= 4
