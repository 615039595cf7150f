"""Perceptual Grounding / Material Transparency: is the object inside the glass jar or behind it?

Scene: a clear glass jar (an open glass container, static) and a small object that either stands
on the jar's floor or on the table just behind the jar as seen from the initial camera, which
looks at the jar level and head-on, so that through the glass both cases look alike. Half the
questions of a seed's draws are "inside" and half "behind" (one fair coin per question). Two
distractor objects stand elsewhere.

Ground truth: from the settled simulator, the object is inside when its footprint centre lies
within the jar's inner walls and its bottom is below the rim.

Decisive evidence (1 piece): a frame looking down at least 50 degrees (pitch <= -50) that shows
the object with at least half of its unoccluded pixel area, so its place relative to the rim is
seen from above.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_object,
    orbit_pose,
    pick,
    r6,
    scatter_distractors,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

SMALL = ["cube", "ball", "cylinder"]
SHAPES = ["cube", "cylinder", "ball", "cone", "pyramid"]


def is_inside(world: World, obj: str, jar: str) -> bool:
    """Whether ``obj`` stands within ``jar``'s inner walls, below its rim (read from the sim)."""
    spec = world.scene.object(jar)
    (jx, jy, _), orn = world.sim.pose_of(jar)
    yaw = 2 * math.atan2(orn[2], orn[3])
    (ox, oy, _), _ = world.sim.pose_of(obj)
    dx, dy = ox - jx, oy - jy
    lx = dx * math.cos(yaw) + dy * math.sin(yaw)
    ly = -dx * math.sin(yaw) + dy * math.cos(yaw)
    inner_x = spec.size[0] / 2 - spec.wall
    inner_y = spec.size[1] / 2 - spec.wall
    lo, _ = world.sim.aabb(obj)
    _, jar_hi = world.sim.aabb(jar)
    return abs(lx) < inner_x and abs(ly) < inner_y and float(lo[2]) < float(jar_hi[2])


class MaterialTransparencyFamily(TaskFamily):
    """Material Transparency."""

    family = "Perceptual Grounding"
    subcategory = "Material Transparency"
    slug = "material_transparency"
    designs = ("yes", "no")
    """Answer designs: inside or behind in turn (version 10; a coin before)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 3)
        category = pick(rng, SMALL)
        inside = bool(rng.integers(2))
        heading = float(rng.uniform(0, 360))  # the camera looks along this direction
        fwd = unit(heading)
        jar_xy = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        inner = float(rng.uniform(0.1, 0.13))
        depth = float(rng.uniform(0.09, 0.12))
        jar = container(
            "glass_jar", "white", (float(jar_xy[0]), float(jar_xy[1])), (inner, inner, depth), yaw=heading
        )
        jar = jar.model_copy(update={"material": "glass", "category": "jar"})
        scale = float(rng.uniform(0.035, 0.045))
        if inside:
            xy = jar_xy + fwd * float(rng.uniform(-0.01, 0.01))
        else:
            xy = jar_xy + fwd * (inner / 2 + jar.wall + scale / 2 + float(rng.uniform(0.015, 0.035)))
        target = make_object(
            category, cols[0], (float(xy[0]), float(xy[1])), scale, yaw=float(rng.uniform(0, 90))
        )
        if inside:
            target = target.model_copy(
                update={
                    "position": (target.position[0], target.position[1], r6(jar.wall + target.size[2] / 2))
                }
            )
        placed = [((float(jar_xy[0]), float(jar_xy[1])), inner / 2 + 0.08)]
        extras = scatter_distractors(
            rng, cols[1:], SHAPES, placed, radius=0.05, gap=0.08, scale=(0.045, 0.06)
        )
        camera = orbit_pose(
            (float(jar_xy[0]), float(jar_xy[1]), depth * 0.5),
            heading + 180 + float(rng.uniform(-4, 4)),
            float(rng.uniform(4, 9)),
            float(rng.uniform(0.38, 0.48)),
        )
        noun = target.category
        return TaskDraft(
            design="yes" if inside else "no",
            scene=SceneSpec(objects=[jar, target, *extras], camera=camera),
            text=f"Is the {cols[0]} {noun} inside the glass jar?",
            contract=yes_no_contract(),
            guidance=(
                "The jar is clear glass: from the side, an object just behind it looks as if it were "
                "inside. Rise and look down into the jar, or move around it, to see whether the "
                "object stands on the jar's floor within its walls. " + CAMERA_GUIDANCE
            ),
            metadata={"target": target.name, "jar": jar.name, "designed_inside": inside},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return "yes" if is_inside(world, draft.metadata["target"], draft.metadata["jar"]) else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        t = metadata["target"]
        return [ViewEvidence(objects=[t], max_pitch=-50.0, label=f"{t} seen from above, against the rim")]
