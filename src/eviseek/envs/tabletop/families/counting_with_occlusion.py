"""Enumerative Perception / Counting with Occlusion: how many objects of one kind are there?

Scene: 2-6 target objects of one colour and shape, two or three upright boards (static), and
distractors that share either the colour or the shape. At least one target stands right behind a
board as seen from the initial camera, so a first-view count comes out low.

Ground truth: the number of bodies in the simulator whose built shape and colour match the
target kind (shape from PyBullet's visual geometry, colour from the body's RGBA mapped to the
nearest named colour).

Decisive evidence (one piece per target): that target visible with at least half of its
unoccluded pixel area in some frame. Soft score ``max(0, 1 - |error| / 3)`` as in ESI-Bench.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eviseek.envs.tabletop.colors import BOARD_COLORS, PALETTE
from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_board,
    make_object,
    orbit_pose,
    pick,
    scatter,
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.partial_occlusion import built_category
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import AnswerContract, Pose

SHAPES = ["cube", "cylinder", "ball", "cone", "pyramid"]


def built_color(world: World, name: str) -> str:
    """The named colour closest to the RGBA PyBullet renders ``name`` with."""
    p = world.sim.p
    rgba = p.getVisualShapeData(world.sim.uid[name], physicsClientId=world.sim.client)[0][7]
    return min(PALETTE, key=lambda k: sum((a - b) ** 2 for a, b in zip(PALETTE[k], rgba[:3], strict=True)))


def count_matching(world: World, category: str, color: str) -> int:
    """How many objects on the table are built as ``category`` in ``color`` (read from the sim)."""
    n = 0
    for name in world.sim.uid:
        if world.sim.is_parked(name) or world.scene.object(name).category == "board":
            continue
        if built_category(world, name) == category and built_color(world, name) == color:
            n += 1
    return n


def count_contract() -> AnswerContract:
    """Integer answer contract."""
    return AnswerContract(kind="integer", format_hint="Answer with a whole number.")


def distractors(
    rng: np.random.Generator,
    shape: str,
    color: str,
    k: int,
    placed: list[tuple[tuple[float, float], float]],
    region: tuple[float, float, float, float],
) -> list[ObjectSpec]:
    """Objects sharing the target's colour or shape, but never both."""
    out = []
    for i in range(k):
        if i % 2 == 0:
            cat, col = shape, pick(rng, [x for x in colors(rng, 3) if x != color])
        else:
            cat, col = pick(rng, [s for s in SHAPES if s != shape]), color
        (xy,) = scatter(rng, [0.04], placed=placed, gap=0.05, region=region)
        placed.append((xy, 0.04))
        out.append(
            make_object(
                cat, col, xy, float(rng.uniform(0.045, 0.06)), name=f"{col}_{cat}_d{i}", role="distractor"
            )
        )
    return out


PLURAL = {
    "ball": "balls",
    "cube": "cubes",
    "cylinder": "cylinders",
    "cone": "cones",
    "pyramid": "pyramids",
}
"""The plural each shape takes in a counting question."""


@dataclass
class CountScene:
    """A counting scene being drawn: the objects so far, the discs they take up, the targets."""

    shape: str
    color: str
    objects: list[ObjectSpec] = field(default_factory=list)
    placed: list[tuple[tuple[float, float], float]] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)

    def add_target(self, rng: np.random.Generator, xy: tuple[float, float], max_scale: float) -> None:
        """Stand the next target at ``xy``, its size drawn from [0.045, ``max_scale``) m."""
        name = f"{self.color}_{self.shape}_{len(self.targets)}"
        self.objects.append(
            make_object(
                self.shape, self.color, xy, float(rng.uniform(0.045, max_scale)), name=name, role="target"
            )
        )
        self.placed.append((xy, 0.04))
        self.targets.append(name)

    def add_distractors(self, rng: np.random.Generator, region: tuple[float, float, float, float]) -> None:
        """Two to four objects sharing the targets' colour or shape, inside ``region``."""
        self.objects += distractors(rng, self.shape, self.color, int(rng.integers(2, 5)), self.placed, region)

    def draft(self, camera: Pose, text: str, guidance: str) -> TaskDraft:
        """The task: ``text`` is the question after "How many <colour> <shapes> are"."""
        return TaskDraft(
            scene=SceneSpec(objects=self.objects, camera=camera),
            text=f"How many {self.color} {PLURAL[self.shape]} are {text}",
            contract=count_contract(),
            guidance=guidance + " " + CAMERA_GUIDANCE,
            metadata={"targets": self.targets, "category": self.shape, "color": self.color},
        )


class CountingFamily(TaskFamily):
    """A family whose answer is how many targets of one colour and shape the table holds."""

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return str(count_matching(world, draft.metadata["category"], draft.metadata["color"]))

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return [ViewEvidence(objects=[t], label=f"{t} visible") for t in metadata["targets"]]


class CountingWithOcclusionFamily(CountingFamily):
    """Counting with Occlusion."""

    family = "Enumerative Perception"
    subcategory = "Counting with Occlusion"
    slug = "counting_with_occlusion"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        shape = pick(rng, SHAPES)
        color = colors(rng, 1)[0]
        n = int(rng.integers(2, 7))
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        centre = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        eye_xy = centre - fwd * 0.85
        scene = CountScene(shape, color)
        n_boards = int(rng.integers(2, 4))
        hidden = int(rng.integers(1, min(n, n_boards) + 1))
        for b in range(n_boards):
            lat = (b - (n_boards - 1) / 2) * 0.3 + float(rng.uniform(-0.04, 0.04))
            depth = float(rng.uniform(-0.15, 0.05))
            bxy = centre + side * lat + fwd * depth
            col = pick(rng, list(BOARD_COLORS))
            board = make_board(
                f"{col}_board_{b}",
                col,
                (float(bxy[0]), float(bxy[1])),
                (0.02, 0.17, float(rng.uniform(0.13, 0.16))),
                heading,
            )
            scene.objects.append(board)
            scene.placed.append(((float(bxy[0]), float(bxy[1])), 0.1))
            if b < hidden:
                # Right behind the board, on the line from the camera through its centre.
                ray = bxy - eye_xy
                txy = bxy + ray / np.linalg.norm(ray) * float(rng.uniform(0.07, 0.1))
                scene.add_target(rng, (float(txy[0]), float(txy[1])), 0.055)
        region = (-0.6, 0.6, -0.42, 0.42)
        while len(scene.targets) < n:
            (xy,) = scatter(rng, [0.04], placed=scene.placed, gap=0.05, region=region)
            scene.add_target(rng, xy, 0.055)
        scene.add_distractors(rng, region)
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.03), heading + 180, float(rng.uniform(8, 13)), 0.85
        )
        return scene.draft(
            camera,
            "on the table?",
            "Some objects may stand behind the boards. Look behind each board (move sideways and "
            "turn back, or rise and look down) and count each object once even if you see it "
            "from several places. There is at least one.",
        )
