"""The scene check refuses impossible scenes: sunk, floating or overlapping objects.

Scenes are built by hand in PyBullet (the real simulator) and judged by where the built shapes
end up; the generator's own use is checked on Liquid Volume's left/right form, whose version 9
placement sank the cup into the table and hung the bowl in the air.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from eviseek.envs.tabletop.families import get_family
from eviseek.envs.tabletop.families._common import make_object, yes_no_contract
from eviseek.envs.tabletop.families._mirror import make_backdrop
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.generate import QuestionBuilder, SceneCheckError
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec
from eviseek.envs.tabletop.sim import TabletopSim
from eviseek.envs.tabletop.sim.placement import PlacementProblem, placement_problems
from eviseek.envs.tabletop.support import Evidence, ViewEvidence


@pytest.fixture
def judge() -> Iterator[object]:
    sims: list[TabletopSim] = []

    def run(objects: list[ObjectSpec]) -> list[PlacementProblem]:
        sim = TabletopSim(SceneSpec(objects=objects), width=32, height=24)
        sims.append(sim)
        return placement_problems(sim)

    yield run
    for s in sims:
        s.close()


def cup_and_bowl() -> tuple[ObjectSpec, ObjectSpec]:
    """A tall cup (13 cm deep) and a shallow bowl (4 cm deep), each standing on the table."""
    cup = container("red_cup", "red", (0.1, 0.0), (0.05, 0.05, 0.13), category="cup")
    bowl = container("blue_bowl", "blue", (-0.1, 0.0), (0.1, 0.1, 0.04), category="bowl")
    return cup, bowl


def test_containers_standing_on_the_table_pass(judge) -> None:
    assert judge(list(cup_and_bowl())) == []


def test_the_version_9_liquid_volume_swap_is_refused(judge) -> None:
    # Version 9 swapped the two containers' whole positions, heights included.
    cup, bowl = cup_and_bowl()
    swapped = [
        cup.model_copy(update={"position": bowl.position}),
        bowl.model_copy(update={"position": cup.position}),
    ]
    problems = {(p.object, p.kind): p.mm for p in judge(swapped)}
    sink = (cup.size[2] - bowl.size[2]) / 2 * 1000
    assert problems[("red_cup", "sunk")] == pytest.approx(sink, abs=1.0)
    assert problems[("blue_bowl", "floating")] == pytest.approx(sink, abs=1.0)


def test_an_object_on_another_is_carried_and_one_in_the_air_is_not(judge) -> None:
    base = make_object("cube", "red", (0.0, 0.0), 0.06)
    top = make_object("cube", "blue", (0.0, 0.0), 0.04)
    stacked = top.model_copy(update={"position": (0.0, 0.0, 0.06 + 0.02)})
    assert judge([base, stacked]) == []
    hanging = top.model_copy(update={"position": (0.0, 0.0, 0.06 + 0.02 + 0.03)})
    [problem] = judge([base, hanging])
    assert (problem.object, problem.kind) == ("blue_cube", "floating")
    assert problem.mm == pytest.approx(30.0, abs=1.0)


def test_a_side_neighbour_does_not_carry_an_object(judge) -> None:
    # Touching a tall box's side 2 cm above the table: nothing holds it up.
    wall = make_object("cube", "red", (0.0, 0.0), 0.1, mass=0.0)
    cube = make_object("cube", "blue", (0.07, 0.0), 0.04)
    cube = cube.model_copy(update={"position": (0.07, 0.0, 0.04)})
    kinds = [(p.object, p.kind) for p in judge([wall, cube])]
    assert kinds == [("blue_cube", "floating")]


def test_overlapping_objects_are_refused(judge) -> None:
    a = make_object("cube", "red", (0.0, 0.0), 0.06)
    b = make_object("cube", "blue", (0.04, 0.0), 0.06)
    [problem] = judge([a, b])
    assert (problem.kind, problem.object, problem.other) == ("overlap", "red_cube", "blue_cube")
    assert problem.mm == pytest.approx(20.0, abs=1.0)
    assert "overlap by 20" in problem.describe()


def test_a_backdrop_beyond_the_table_stands_on_the_floor(judge) -> None:
    on_floor = make_backdrop(np.array([0.0, 0.9]), 90.0)
    assert on_floor.position[2] - on_floor.size[2] / 2 == pytest.approx(-0.75)
    on_table = make_backdrop(np.array([0.0, 0.3]), 90.0)
    assert on_table.position[2] - on_table.size[2] / 2 == pytest.approx(0.0)
    assert judge([on_floor]) == [] and judge([on_table]) == []
    # The version 9 backdrop: level with the table top, beyond its edge.
    old = on_table.model_copy(update={"position": (0.0, 0.9, on_table.position[2])})
    assert [p.kind for p in judge([old])] == ["floating"]


def liquid_side_questions(n: int) -> list:
    fam = get_family("liquid_volume")
    builder = QuestionBuilder(width=64, height=48)
    try:
        return [builder.build(fam, 4040, i, render_images=False, designs=fam.esi_designs) for i in range(n)]
    finally:
        builder.close()


def test_liquid_volume_left_right_containers_stand_on_the_table() -> None:
    questions = liquid_side_questions(8)
    for q in questions:
        spec = SceneSpec.from_question(q.scene)
        sim = TabletopSim(spec, width=32, height=24)
        try:
            assert placement_problems(sim) == []
            for name in q.metadata["containers"]:
                assert float(sim.aabb(name)[0][2]) == pytest.approx(0.0, abs=0.002), (q.id, name)
        finally:
            sim.close()
        assert q.metadata["scene_check_refused"] == 0


class SinkingFamily(TaskFamily):
    """Always draws a cube half inside the table."""

    family = "Test"
    subcategory = "Sinking"
    slug = "sinking"
    hide_from_first_view = False

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cube = make_object("cube", "red", (0.0, 0.0), 0.06, mass=0.0)
        cube = cube.model_copy(update={"position": (0.0, 0.0, 0.0)})
        return TaskDraft(scene=SceneSpec(objects=[cube]), text="?", contract=yes_no_contract(), guidance="")

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return "yes"

    def evidence(self, scene: SceneSpec, metadata: dict) -> list[Evidence]:
        return [ViewEvidence(objects=["red_cube"])]


def test_the_generator_refuses_to_write_a_question_over_a_broken_scene() -> None:
    builder = QuestionBuilder(width=32, height=24)
    try:
        with pytest.raises(SceneCheckError, match=r"red_cube: reaches 30\.0 mm into the table"):
            builder.build(SinkingFamily(), 1, 0, render_images=False)
    finally:
        builder.close()
