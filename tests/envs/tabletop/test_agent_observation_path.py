"""Agent Observation's robot drives a path that clears every object, checked in PyBullet.

The generator keeps objects clear of the robot by a geometric rule
(:func:`~eviseek.envs.tabletop.families.agent_observation.clearance`); these tests do not trust
that rule: they drive the built robot body along the recorded path in the simulator (small steps
along each leg, turning on the spot at each corner) and ask PyBullet for the closest distance
between the robot and every other object at each step.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np

from eviseek.envs.tabletop import SceneSpec, generate_questions
from eviseek.envs.tabletop.families.agent_observation import CLEARANCE, PASS_RADIUS, path_distance
from eviseek.envs.tabletop.sim import TabletopSim
from eviseek.types import Question

STEP = 0.005
"""Metres between two robot poses along a leg."""
TURN_STEP = 5.0
"""Degrees between two robot headings while it turns at a corner."""


@cache
def questions() -> tuple[Question, ...]:
    return tuple(generate_questions(8, 23, subcategories=["agent_observation"], render_images=False))


def full_path(q: Question, sim: TabletopSim) -> list[np.ndarray]:
    """Start, turns (recorded) and the robot's live position (where it stopped)."""
    end = np.asarray(sim.pose_of(q.metadata["robot"])[0][:2])
    return [np.asarray(p, dtype=float) for p in q.metadata["path"]] + [end]


def robot_poses(path: list[np.ndarray]) -> list[tuple[np.ndarray, float]]:
    """Every pose the robot takes, heading in degrees: drive each leg, turn at each corner."""
    poses: list[tuple[np.ndarray, float]] = []
    headings = [math.degrees(math.atan2(*(b - a)[::-1])) for a, b in itertools.pairwise(path)]
    for k, (a, b) in enumerate(itertools.pairwise(path)):
        n = max(1, math.ceil(float(np.linalg.norm(b - a)) / STEP))
        poses += [(a + (b - a) * t / n, headings[k]) for t in range(n + 1)]
        if k + 1 < len(headings):
            turn = (headings[k + 1] - headings[k] + 180) % 360 - 180
            m = max(1, math.ceil(abs(turn) / TURN_STEP))
            poses += [(b, headings[k] + turn * t / m) for t in range(m + 1)]
    return poses


def smallest_gaps(q: Question) -> dict[str, float]:
    """For each object, its least distance (m) from the robot over the whole drive (PyBullet)."""
    spec = SceneSpec.from_question(q.scene)
    sim = TabletopSim(spec, width=32, height=32)
    try:
        p, robot = sim.p, sim.uid[q.metadata["robot"]]
        z = sim.pose_of(q.metadata["robot"])[0][2]
        gaps = {n: math.inf for n in sim.uid if n != q.metadata["robot"]}
        for xy, heading in robot_poses(full_path(q, sim)):
            quat = p.getQuaternionFromEuler([0, 0, math.radians(heading)])
            p.resetBasePositionAndOrientation(
                robot, [float(xy[0]), float(xy[1]), z], quat, physicsClientId=sim.client
            )
            p.performCollisionDetection(physicsClientId=sim.client)
            for name in gaps:
                pts = p.getClosestPoints(robot, sim.uid[name], 0.05, physicsClientId=sim.client)
                if pts:
                    gaps[name] = min(gaps[name], min(float(c[8]) for c in pts))
        return gaps
    finally:
        sim.close()


def test_the_robot_clears_every_object_along_its_whole_drive() -> None:
    worst = []
    for q in questions():
        gaps = smallest_gaps(q)
        name, gap = min(gaps.items(), key=lambda kv: kv[1])
        worst.append((q.id, name, round(gap * 1000, 1)))
    # PyBullet's closest distance includes its collision margin on meshes, so allow 1 mm of it.
    assert all(gap >= CLEARANCE * 1000 - 1.0 for _, _, gap in worst), worst


def test_the_sweep_sees_an_object_set_on_the_path() -> None:
    # The check above must be able to fail: an object moved onto a leg's midpoint is hit.
    q = questions()[0]
    scene = dict(q.scene)
    path = [np.asarray(p, dtype=float) for p in q.metadata["path"]]
    mid = (path[0] + path[1]) / 2
    victim = q.metadata["kind"][0]
    objects = []
    for o in scene["objects"]:
        if o["name"] == victim:
            o = {**o, "position": [float(mid[0]), float(mid[1]), o["position"][2]]}
        objects.append(o)
    moved = q.model_copy(update={"scene": {**scene, "objects": objects}})
    assert smallest_gaps(moved)[victim] <= 0.0


def test_passed_objects_stand_well_inside_and_the_rest_well_outside_ten_centimetres() -> None:
    for q in questions():
        spec = SceneSpec.from_question(q.scene)
        sim = TabletopSim(spec, width=32, height=32)
        try:
            path = full_path(q, sim)
            dists = [path_distance(np.asarray(sim.pose_of(n)[0][:2]), path) for n in q.metadata["kind"]]
        finally:
            sim.close()
        assert all(d <= PASS_RADIUS - 0.007 or d >= PASS_RADIUS + 0.04 for d in dists), (q.id, dists)
        assert sum(d <= PASS_RADIUS for d in dists) == int(q.ground_truth)


def test_every_count_comes_up_equally_often() -> None:
    answers = [q.ground_truth for q in questions()]
    assert sorted(answers) == ["0", "0", "1", "1", "2", "2", "3", "3"]
