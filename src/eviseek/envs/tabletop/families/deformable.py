"""Physical Structure / Deformable: what shape is hidden under the cloth?

Scene: a cloth sheet (22-26 cm square, visual only, see ``sim/cloth.py``) draped over one object
(cube, cylinder, ball, cone or pyramid, 5.5-7 cm, static); two distractors stand elsewhere. The
cloth takes the object's outline: a flat square top over a cube, a flat round top over a
cylinder, a dome over a ball, a peak over a cone, ridges over a pyramid. The camera starts at a
middle elevation (30-40 degrees) a metre away, from where neither the profile nor the footprint
is clear. Four of the five shapes are offered, the answer among them.

Ground truth: the shape PyBullet built for the covered object (visual geometry type and, for
meshes, the vertex count that tells a cone from a pyramid).

Decisive evidence (2 pieces): the cloth seen from low down (the viewing ray at least 65 degrees
from the vertical: the profile) and seen from above (pitch <= -60: the footprint), each with at
least half of its unoccluded pixel area.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_object,
    option_contract,
    orbit_pose,
    pick,
    scatter_distractors,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.partial_occlusion import built_category
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec, yaw_quat
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

SHAPES = ["cube", "cylinder", "ball", "cone", "pyramid"]
CLOTH_COLORS = ["white", "gray"]


class DeformableFamily(TaskFamily):
    """Deformable."""

    family = "Physical Structure"
    subcategory = "Deformable"
    slug = "deformable"
    designs = ("0", "1", "2", "3")
    """Answer designs: the true shape's place among the options, in turn (a random order before
    version 10)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        shape = pick(rng, SHAPES)
        cols = colors(rng, 3)
        xy = (float(rng.uniform(-0.12, 0.12)), float(rng.uniform(-0.1, 0.1)))
        yaw = float(rng.uniform(0, 90))
        hidden = make_object(
            shape,
            cols[0],
            xy,
            float(rng.uniform(0.055, 0.07)),
            yaw=yaw,
            role="target",
            mass=0.0,
            movable=False,
        )
        cloth_color = pick(rng, CLOTH_COLORS)
        side = float(rng.uniform(0.22, 0.26))
        cloth = ObjectSpec(
            name=f"{cloth_color}_cloth",
            shape="cloth",
            category="cloth",
            color=cloth_color,
            size=(round(side, 6), round(side, 6), 0.01),
            position=(round(xy[0], 6), round(xy[1], 6), 0.0),
            orientation=yaw_quat(float(rng.uniform(0, 90))),
            mass=0.0,
            movable=False,
            role="cloth",
        )
        placed = [(xy, side * 0.72)]
        extras = scatter_distractors(
            rng, cols[1:], SHAPES, placed, radius=0.05, gap=0.08, scale=(0.045, 0.06)
        )
        camera = orbit_pose((xy[0], xy[1], 0.03), float(rng.uniform(0, 360)), float(rng.uniform(30, 40)), 1.0)
        options = [shape, *pick(rng, [s for s in SHAPES if s != shape], 3)]
        options = [options[int(i)] for i in rng.permutation(4)]
        return TaskDraft(
            design=str(options.index(shape)),
            scene=SceneSpec(objects=[hidden, cloth, *extras], camera=camera),
            text=f"What object is under the {cloth_color} cloth?",
            contract=option_contract(options, "Answer with the shape's name."),
            guidance=(
                "The cloth hides the object but takes its outline. Look at it from low down to see "
                "its profile (flat top, dome or peak) and from above to see its footprint (square or "
                "round, ridges or none). " + CAMERA_GUIDANCE
            ),
            metadata={"target": hidden.name, "cloth": cloth.name},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return built_category(world, draft.metadata["target"])

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        cloth = metadata["cloth"]
        return [
            ViewEvidence(
                objects=[cloth], axis=(0.0, 0.0, 1.0), min_angle=65.0, label=f"{cloth} profile from low down"
            ),
            ViewEvidence(objects=[cloth], max_pitch=-60.0, label=f"{cloth} footprint from above"),
        ]
