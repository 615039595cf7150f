"""Enumerative Perception / Category Ambiguity: count cubes among blocks that look the same from above.

Scene: 2-5 cubes of one colour (every side within 10 per cent of the others) and 2-4 look-alike
blocks of the same colour and footprint but 1.7-2.2 times as tall, plus two or three cubes of
other colours. Footprints vary from 4.5 to 6.5 cm, so apparent size does not tell a block from a
cube. The camera starts high above the table looking straight down, where a cube and a block show
the same square top; only a view from the side shows which is which.

Ground truth: the number of bodies PyBullet built as boxes in the asked colour whose three sides
are within 10 per cent of each other (read from the visual shape's extents and RGBA).

Decisive evidence (one piece per cube and per look-alike block): that object visible with at least
half of its unoccluded pixel area, seen along a ray at least 45 degrees from the vertical.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.colors import OBJECT_COLORS, PALETTE
from eviseek.envs.tabletop.families._common import CAMERA_GUIDANCE, colors, make_object, pick, r6, scatter
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.counting_with_occlusion import count_contract
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec, rounded
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import Pose

CUBE_TOLERANCE = 0.10
"""A box is a cube when its longest side is at most this much longer than its shortest (ours)."""


def is_cube(extents: tuple[float, float, float] | list[float]) -> bool:
    """Whether a box with these full extents counts as a cube."""
    return max(extents) <= (1 + CUBE_TOLERANCE) * min(extents)


def built_cubes(world: World, color: str) -> int:
    """How many bodies on the table PyBullet built as ``color`` boxes with cube proportions."""
    p, sim = world.sim.p, world.sim
    n = 0
    for name, uid in sim.uid.items():
        if sim.is_parked(name):
            continue
        data = p.getVisualShapeData(uid, physicsClientId=sim.client)[0]
        if data[2] != p.GEOM_BOX:
            continue
        rgb = data[7][:3]
        nearest = min(PALETTE, key=lambda k: sum((a - b) ** 2 for a, b in zip(PALETTE[k], rgb, strict=True)))
        if nearest == color and is_cube(data[3]):
            n += 1
    return n


class CategoryAmbiguityFamily(TaskFamily):
    """Category Ambiguity."""

    family = "Enumerative Perception"
    subcategory = "Category Ambiguity"
    slug = "category_ambiguity"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        color = colors(rng, 1)[0]
        n_cubes = int(rng.integers(2, 6))
        n_blocks = int(rng.integers(2, 5))
        n_other = int(rng.integers(2, 4))
        region = (-0.4, 0.4, -0.3, 0.3)
        spots = scatter(rng, [0.05] * (n_cubes + n_blocks + n_other), region=region, gap=0.05)
        objects: list[ObjectSpec] = []
        cubes: list[str] = []
        blocks: list[str] = []
        kinds = ["cube"] * n_cubes + ["block"] * n_blocks
        kinds = [kinds[int(i)] for i in rng.permutation(len(kinds))]
        for i, (kind, xy) in enumerate(zip(kinds, spots, strict=False)):
            side = float(rng.uniform(0.045, 0.065))
            height = side if kind == "cube" else side * float(rng.uniform(1.7, 2.2))
            name = f"{color}_{kind}_{i}"
            objects.append(
                ObjectSpec(
                    name=name,
                    shape="box",
                    category=kind,
                    color=color,
                    size=rounded((side, side, height)),  # type: ignore[arg-type]
                    position=(r6(xy[0]), r6(xy[1]), r6(height / 2)),
                    orientation=(0.0, 0.0, 0.0, 1.0),
                    role="target" if kind == "cube" else "lookalike",
                )
            )
            (cubes if kind == "cube" else blocks).append(name)
        others = [c for c in OBJECT_COLORS if c != color]
        for j, xy in enumerate(spots[len(kinds) :]):
            col = pick(rng, others)
            objects.append(
                make_object(
                    "cube",
                    col,
                    xy,
                    float(rng.uniform(0.045, 0.065)),
                    name=f"{col}_cube_d{j}",
                    role="distractor",
                )
            )
        camera = Pose(
            x=r6(float(rng.uniform(-0.05, 0.05))),
            y=r6(float(rng.uniform(-0.05, 0.05))),
            z=1.0,
            yaw=0.0,
            pitch=-90.0,
        )
        return TaskDraft(
            scene=SceneSpec(objects=objects, camera=camera),
            text=f"How many {color} cubes are on the table?",
            contract=count_contract(),
            guidance=(
                "Some blocks share the cubes' colour and square top but are about twice as tall, and "
                "they are not cubes. From straight above they look alike: lower the camera and look "
                "at the objects from the side to tell each one's height, and count each cube once. "
                "There is at least one. " + CAMERA_GUIDANCE
            ),
            metadata={"targets": cubes, "lookalikes": blocks, "category": "cube", "color": color},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return str(built_cubes(world, draft.metadata["color"]))

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return [
            ViewEvidence(
                objects=[name], axis=(0.0, 0.0, 1.0), min_angle=45.0, label=f"{name} seen from the side"
            )
            for name in [*metadata["targets"], *metadata["lookalikes"]]
        ]
