"""Temporal Understanding / Agent Observation: how many objects of one kind did a robot drive past?

Scene: a small black robot (a wheeled base 9 x 7 cm, a mast and a camera head, 16 cm tall) drove
across the table in three straight legs; the reference images
show it, from the camera's first pose, at its start and at its two turns (rendered with the robot
moved there, ``SceneSpec.reference_changes``), and the live scene holds it where it stopped.
Objects of one kind (colour and shape) stand around: by design 0-3 of them (the counts in turn)
within 7.8-9.2 cm of the robot's path (centre to path) and the rest, three or four in all
whatever the count, at least 15 cm from it; objects of other kinds stand near the path too. Every
object clears the space the robot sweeps (its sides along each leg, the circle its corners sweep
turning at each corner) by at least 5 mm (:func:`clearance`; version 10's robot grazed objects
by 3-7 mm). The question asks how
many of the kind the robot passed within 10 cm, answered 0, 1, 2 or 3 as in ESI-Bench.

Ground truth: the objects PyBullet built in the asked shape and colour, at their settled poses,
whose centres lie within 10 cm of the path (the polyline through the start, the turns and the
robot's final position, read from the simulator).

Decisive evidence (one piece per object of the asked kind): that object visible with at least half
of its unoccluded pixel area, seen looking down at least 45 degrees (pitch <= -45), where its
distance from the path can be judged.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    PlacementError,
    colors,
    make_object,
    option_contract,
    orbit_pose,
    pick,
    r6,
    separated,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.counting_with_occlusion import PLURAL, built_color
from eviseek.envs.tabletop.families.partial_occlusion import built_category
from eviseek.envs.tabletop.scene import ObjectSpec, SceneChange, SceneSpec, yaw_quat
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

SHAPES = ["cube", "cylinder", "ball", "cone", "pyramid"]
PASS_RADIUS = 0.10
"""How close to the path counts as passing an object (metres, ours: ESI-Bench's 1 m scaled to a
table)."""
ROBOT = "black_robot"
ROBOT_SIZE = (0.09, 0.07, 0.16)
"""The robot's extent (m): a wheeled base 9 x 7 cm, a mast and a camera head 16 cm up (ours: it
must read as a robot, not a block)."""
ROBOT_HALF_LENGTH = 0.047
"""Half the robot's length along its heading, wheels included (they reach 0.32 x 9 cm + 1.76 cm
from its centre), rounded up (m)."""
ROBOT_HALF_WIDTH = ROBOT_SIZE[1] / 2
ROBOT_TURN_RADIUS = math.hypot(ROBOT_HALF_LENGTH, ROBOT_HALF_WIDTH)
"""The circle the robot's corners sweep when it turns on the spot at a corner of its path (m)."""
CLEARANCE = 0.005
"""Least gap (m) between any object and the space the robot sweeps while driving (ours: version
10 let it graze objects by 3-7 mm)."""
NEAR_BAND = (0.078, 0.092)
"""Centre-to-path distances (m) of the objects the robot passes: far enough that the widest object
(a 5 cm cube turned corner-on, 3.5 cm) clears the robot's side by ``CLEARANCE``, and at least
8 mm inside the 10 cm that counts as passing."""
FAR_BAND = (0.15, 0.6)
"""Centre-to-path distances (m) of the objects of the asked kind it does not pass."""


def path_distance(point: np.ndarray, path: list[np.ndarray]) -> float:
    """Shortest distance in the plane from ``point`` to the polyline ``path``."""
    best = math.inf
    for a, b in itertools.pairwise(path):
        ab = b - a
        t = float(np.clip((point - a) @ ab / max(float(ab @ ab), 1e-12), 0.0, 1.0))
        best = min(best, float(np.linalg.norm(point - (a + t * ab))))
    return best


def footprint_radius(category: str, scale: float) -> float:
    """Radius of the circle around a catalogue object's footprint (m): half the diagonal of a
    cube's or pyramid's square base, half the width of a round one."""
    return scale * (math.sqrt(2) / 2 if category in ("cube", "pyramid") else 0.5)


def clearance(point: np.ndarray, radius: float, path: list[np.ndarray]) -> float:
    """The gap (m) between a disc of ``radius`` at ``point`` and everything the robot covers while
    it drives ``path``: along each leg a band of its half-width around the leg, and at every
    corner, the start and the end a disc it sweeps turning on the spot (which also covers its
    nose and tail sticking out past a leg's ends). Negative when they overlap."""
    legs = min(path_distance(point, [a, b]) for a, b in itertools.pairwise(path)) - ROBOT_HALF_WIDTH
    corners = min(float(np.linalg.norm(point - v)) for v in path) - ROBOT_TURN_RADIUS
    return min(legs, corners) - radius


def _walk(rng: np.random.Generator) -> list[np.ndarray]:
    """Start, two turns and the end of a drive that stays on the table."""
    while True:
        pts = [np.array([rng.uniform(-0.5, -0.3), rng.uniform(-0.3, 0.3)])]
        heading = float(rng.uniform(-40, 40))
        for _ in range(3):
            heading += float(rng.choice([-1.0, 1.0])) * float(rng.uniform(35, 75))
            step = float(rng.uniform(0.28, 0.38))
            pts.append(
                pts[-1] + step * np.array([math.cos(math.radians(heading)), math.sin(math.radians(heading))])
            )
        if all(abs(p[0]) < 0.62 and abs(p[1]) < 0.44 for p in pts):
            return pts


class AgentObservationFamily(TaskFamily):
    """Agent Observation."""

    family = "Temporal Understanding"
    subcategory = "Agent Observation"
    slug = "agent_observation"

    # Long because it draws one question's scene as a fixed sequence of random draws, then writes the
    # text and metadata from them. The draw order is part of what a seed means (reordering changes
    # every generated question, and with it the generator version), so the steps stay in one
    # sequence that reads top to bottom.
    designs = ("0", "1", "2", "3")
    """How many objects of the asked kind the robot passes, in turn (version 10 drew it, and a
    seed could lean one way)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, None)  # design_to_build draws one

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        return self._draw(rng, int(self.design_to_build(rng, design)))

    def _draw(self, rng: np.random.Generator, near: int) -> TaskDraft:
        cols = colors(rng, 3)
        shape = pick(rng, SHAPES)
        # Three or four of the asked kind whatever the answer, so their number says nothing.
        far = int(rng.integers(3, 5)) - near
        path = _walk(rng)
        placed: list[tuple[tuple[float, float], float]] = []
        objects: list[ObjectSpec] = []

        def spot(band: tuple[float, float], radius: float) -> tuple[float, float]:
            lo, hi = band
            for _ in range(2000):
                xy = np.array([rng.uniform(-0.68, 0.68), rng.uniform(-0.5, 0.5)])
                d = path_distance(xy, path)
                if (
                    lo <= d <= hi
                    and clearance(xy, radius, path) >= CLEARANCE
                    and separated((float(xy[0]), float(xy[1])), 0.035, placed, 0.03)
                ):
                    placed.append(((float(xy[0]), float(xy[1])), 0.035))
                    return float(xy[0]), float(xy[1])
            raise PlacementError("no free spot at that distance from the path")  # pragma: no cover

        def add(cat: str, col: str, band: tuple[float, float], name: str, role: str) -> None:
            scale = float(rng.uniform(0.04, 0.05))
            xy = spot(band, footprint_radius(cat, scale))
            objects.append(make_object(cat, col, xy, scale, name=name, role=role))

        kind: list[str] = []
        for i, band in enumerate([NEAR_BAND] * near + [FAR_BAND] * far):
            add(shape, cols[0], band, f"{cols[0]}_{shape}_{i}", "target")
            kind.append(f"{cols[0]}_{shape}_{i}")
        for j in range(int(rng.integers(2, 4))):
            col, cat = (
                (cols[1], shape)
                if j % 2 == 0
                else (cols[0 if j == 1 else 2], pick(rng, [s for s in SHAPES if s != shape]))
            )
            add(cat, col, NEAR_BAND, f"{col}_{cat}_d{j}", "distractor")
        robot, moves = _robot_and_moves(path)
        objects.append(robot)
        camera = orbit_pose((0.0, 0.0, 0.02), float(rng.uniform(0, 360)), float(rng.uniform(22, 32)), 1.25)
        return TaskDraft(
            design=str(near),
            scene=SceneSpec(
                objects=objects, camera=camera, reference_cameras=[camera] * 3, reference_changes=moves
            ),
            text=(
                "The black robot drove across the table in straight lines. The reference images show "
                "it, from where you stand now, at its start and at the two places where it turned; it "
                f"stopped where it stands now. How many {cols[0]} {PLURAL[shape]} did it pass within "
                "10 cm during its drive? Answer 0, 1, 2, or 3."
            ),
            contract=option_contract(["0", "1", "2", "3"], "Answer 0, 1, 2 or 3."),
            guidance=(
                "Work out the robot's path from the reference images (start, first turn, second turn) "
                "and its place now. Then look at the table from above, along the path, to judge "
                "which objects of the asked kind stand within 10 cm of it. " + CAMERA_GUIDANCE
            ),
            metadata={
                "kind": kind,
                "category": shape,
                "color": cols[0],
                "robot": ROBOT,
                "path": [[r6(p[0]), r6(p[1])] for p in path[:3]],
            },
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        m = draft.metadata
        end = np.asarray(world.sim.pose_of(m["robot"])[0][:2])
        path = [np.asarray(p) for p in m["path"]] + [end]
        n = 0
        for name in world.sim.uid:
            if name == m["robot"] or world.sim.is_parked(name):
                continue
            if built_category(world, name) != m["category"] or built_color(world, name) != m["color"]:
                continue
            if path_distance(np.asarray(world.sim.pose_of(name)[0][:2]), path) <= PASS_RADIUS:
                n += 1
        return str(n)

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return [
            ViewEvidence(objects=[o], max_pitch=-45.0, label=f"{o} and the path from above")
            for o in metadata["kind"]
        ]


def _robot_and_moves(path: list[np.ndarray]) -> tuple[ObjectSpec, list[list[SceneChange]]]:
    """The robot where it stopped (the path's last point, facing along the last leg) and the
    reference changes that show it at the start and at its two turns."""
    legs = [path[k + 1] - path[k] for k in range(3)]
    yaws = [math.degrees(math.atan2(v[1], v[0])) for v in legs]
    robot = ObjectSpec(
        name=ROBOT,
        shape="robot",
        category="robot",
        color="black",
        size=ROBOT_SIZE,
        position=(r6(path[3][0]), r6(path[3][1]), r6(ROBOT_SIZE[2] / 2)),
        orientation=yaw_quat(yaws[2]),
        mass=0.0,
        movable=False,
        role="robot",
    )
    moves = [
        [
            SceneChange(
                object=ROBOT,
                position=(r6(path[k][0]), r6(path[k][1]), r6(ROBOT_SIZE[2] / 2)),
                orientation=yaw_quat(yaws[k]),
            )
        ]
        for k in range(3)
    ]
    return robot, moves
