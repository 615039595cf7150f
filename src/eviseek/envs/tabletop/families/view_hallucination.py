"""Perceptual Grounding / View Hallucination: what is this object, really?

Scene: one target object, under even light that shades no face (version 11), seen from a
viewpoint where its silhouette matches another shape:
straight from above (a cylinder, a ball and a cone all look like discs; a cube and a pyramid
like squares) or straight from the side at its own height (a cube and an equally tall cylinder
both look like squares; a cone and a pyramid both look like triangles). Two distractors stand
elsewhere. The options are the true shape and the look-alike.

Ground truth: the target's shape as built in the simulator (see Partial Occlusion).

Decisive evidence (1 piece): a frame showing the target with at least half of its unoccluded
pixel area, from a direction at least 35 deg away from the ambiguous one (vertical for the
top-down case, the initial horizontal line of sight for the side case).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_object,
    option_contract,
    r6,
    scatter_distractors,
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.partial_occlusion import built_category
from eviseek.envs.tabletop.scene import LightSpec, SceneSpec, rounded
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import Pose

# (view, true shape, look-alike). Sizes are chosen below so silhouettes match.
CONFUSIONS: list[tuple[str, str, str]] = [
    ("top", "cylinder", "ball"),
    ("top", "ball", "cylinder"),
    ("top", "cone", "cylinder"),
    ("top", "cylinder", "cone"),
    ("top", "pyramid", "cube"),
    ("top", "cube", "pyramid"),
    ("side", "cube", "cylinder"),
    ("side", "cylinder", "cube"),
    ("side", "cone", "pyramid"),
    ("side", "pyramid", "cone"),
]
MIN_ANGLE = 35.0
EVEN_LIGHT = LightSpec(ambient=1.0, diffuse=0.0, specular=0.0)
"""Even, shadowless light (ours, version 11): every face of an object shows its paint unshaded, so
from the ambiguous direction the look-alikes are one flat outline. Under the default directional
light the shading told a flat face from a curved one (a cylinder's top from a ball's), and
Passive with the reference policy named the shape 23 of 30 times on ``test`` (chance 15). From
another direction the outlines differ, so the question stays answerable by moving (by outline:
the reference policy's shape reader leans on shading and does not manage it, see
``docs/tabletop.md``)."""
DESIGNS: tuple[str, ...] = tuple(f"{k}:{(k + lap) % 2}" for lap in range(2) for k in range(len(CONFUSIONS)))
"""Every confusion with the true shape in each option position, ordered so that any ten
consecutive questions hold every confusion once and each position five times (ours: coin flips
made "ball or cylinder" questions the ball 6 times in 7)."""


class ViewHallucinationFamily(TaskFamily):
    """View Hallucination."""

    family = "Perceptual Grounding"
    subcategory = "View Hallucination"
    slug = "view_hallucination"
    designs = DESIGNS

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self._generate(rng, None)

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        return self._generate(rng, design)

    def _generate(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        """A draft; ``design`` (``"<confusion index>:<true option's position>"``) fixes both draws."""
        drawn = int(rng.integers(len(CONFUSIONS)))
        confusion, first = drawn, None
        if design is not None:
            k, pos = design.split(":")
            confusion, first = int(k), pos == "0"
        view, shape, alike = CONFUSIONS[confusion]
        cols = colors(rng, 3)
        xy = (float(rng.uniform(-0.15, 0.15)), float(rng.uniform(-0.1, 0.1)))
        scale = float(rng.uniform(0.07, 0.09))
        yaw = float(rng.uniform(0, 90))
        heading = float(rng.uniform(0, 360))
        if view == "side":
            yaw = heading  # a square face (cube/pyramid) turned squarely to the camera
        target = make_object(shape, cols[0], xy, scale, yaw=yaw, role="target")
        if view == "side" and shape in ("cube", "cylinder"):
            target = target.model_copy(
                update={"size": rounded((scale, scale, scale)), "position": (xy[0], xy[1], r6(scale / 2))}
            )
        placed = [(xy, 0.08)]
        extras = scatter_distractors(
            rng, cols[1:], ["cube", "ball", "cone"], placed, radius=0.05, gap=0.15, scale=0.05
        )
        h = target.size[2]
        if view == "top":
            camera = Pose(
                x=xy[0],
                y=xy[1],
                z=r6(h + float(rng.uniform(0.3, 0.4))),
                yaw=r6(heading - 180),
                pitch=-90.0,
            )
            axis = (0.0, 0.0, 1.0)
        else:
            dist = float(rng.uniform(0.45, 0.6))
            eye = np.asarray(xy) - unit(heading) * dist
            camera = Pose(
                x=r6(eye[0]),
                y=r6(eye[1]),
                z=r6(h / 2),
                yaw=r6((heading + 180.0) % 360.0 - 180.0),
                pitch=0.0,
            )
            axis = (math.cos(math.radians(heading)), math.sin(math.radians(heading)), 0.0)
        coin = bool(rng.integers(2))
        options = [shape, alike] if (coin if first is None else first) else [alike, shape]
        return TaskDraft(
            scene=SceneSpec(objects=[target, *extras], camera=camera, light=EVEN_LIGHT),
            text=(
                f"What shape is the {cols[0]} object in the middle of your first view: "
                f"a {options[0]} or a {options[1]}?"
            ),
            contract=option_contract(options, "Answer with the shape's name."),
            guidance=(
                "From one direction different shapes can have the same outline. Look at the object "
                "from a clearly different angle (circle around it, or change your height and tilt) "
                "while keeping it in view. " + CAMERA_GUIDANCE
            ),
            metadata={"target": target.name, "view": view, "axis": list(axis), "look_alike": alike},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return built_category(world, draft.metadata["target"])

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        t = metadata["target"]
        return [
            ViewEvidence(
                objects=[t],
                axis=tuple(metadata["axis"]),  # type: ignore[arg-type]
                min_angle=MIN_ANGLE,
                label=f"{t} seen from a revealing angle",
            )
        ]
