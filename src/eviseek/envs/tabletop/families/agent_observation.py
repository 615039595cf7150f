"""Temporal Understanding / Agent Observation: how many objects of one kind did a robot drive past?

Scene: a small black robot (a wheeled base 9 x 7 cm, a mast and a camera head, 16 cm tall) drove
across the table in three straight legs; the reference images
show it, from the camera's first pose, at its start and at its two turns (rendered with the robot
moved there, ``SceneSpec.reference_changes``), and the live scene holds it where it stopped.
Objects of one kind (colour and shape) stand around: by design 0-3 of them (each count equally
likely) within 5.5-7.5 cm of the robot's path (centre to path) and the rest, up to four in all,
at least 15 cm from it; objects of other kinds stand near the path too. The question asks how
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


def path_distance(point: np.ndarray, path: list[np.ndarray]) -> float:
    """Shortest distance in the plane from ``point`` to the polyline ``path``."""
    best = math.inf
    for a, b in itertools.pairwise(path):
        ab = b - a
        t = float(np.clip((point - a) @ ab / max(float(ab @ ab), 1e-12), 0.0, 1.0))
        best = min(best, float(np.linalg.norm(point - (a + t * ab))))
    return best


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
    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 3)
        shape = pick(rng, SHAPES)
        near = int(rng.integers(4))
        far = int(rng.integers(max(1, 3 - near), 5 - near))
        path = _walk(rng)
        placed: list[tuple[tuple[float, float], float]] = []
        objects: list[ObjectSpec] = []

        def spot(lo: float, hi: float) -> tuple[float, float]:
            for _ in range(2000):
                xy = np.array([rng.uniform(-0.68, 0.68), rng.uniform(-0.5, 0.5)])
                d = path_distance(xy, path)
                if lo <= d <= hi and separated((float(xy[0]), float(xy[1])), 0.035, placed, 0.03):
                    placed.append(((float(xy[0]), float(xy[1])), 0.035))
                    return float(xy[0]), float(xy[1])
            raise PlacementError("no free spot at that distance from the path")  # pragma: no cover

        kind: list[str] = []
        for i, (lo, hi) in enumerate([(0.055, 0.075)] * near + [(0.15, 0.6)] * far):
            name = f"{cols[0]}_{shape}_{i}"
            objects.append(
                make_object(
                    shape, cols[0], spot(lo, hi), float(rng.uniform(0.04, 0.05)), name=name, role="target"
                )
            )
            kind.append(name)
        for j in range(int(rng.integers(2, 4))):
            col, cat = (
                (cols[1], shape)
                if j % 2 == 0
                else (cols[0 if j == 1 else 2], pick(rng, [s for s in SHAPES if s != shape]))
            )
            objects.append(
                make_object(
                    cat,
                    col,
                    spot(0.055, 0.09),
                    float(rng.uniform(0.04, 0.05)),
                    name=f"{col}_{cat}_d{j}",
                    role="distractor",
                )
            )
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
        objects.append(robot)
        camera = orbit_pose((0.0, 0.0, 0.02), float(rng.uniform(0, 360)), float(rng.uniform(22, 32)), 1.25)
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
        return TaskDraft(
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
