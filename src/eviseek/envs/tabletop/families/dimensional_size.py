"""Metric Comparison / Dimensional Size: which of two same-shaped objects is larger?

Scene: two objects of the same shape and different colours, one 1.2-1.4 times the other's size.
The larger one stands farther from the initial camera, at 1.0-1.15 times the size ratio in
depth, so that both look about equally big (or the larger looks smaller) from there. Two
distractors of other shapes stand around.

Ground truth: from the simulator, the volume of each object's axis-aligned bounding box after
settling; the larger one's name.

Decisive evidence (3 pieces): each object visible with at least half of its unoccluded pixel
area, and one frame showing both where their depths differ by at most 15 per cent (a fair side
by side comparison) or that looks steeply down (pitch <= -60 deg).
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
    pick,
    r6,
    scatter_distractors,
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import AnyOf, Evidence, ViewEvidence
from eviseek.types import Pose


class DimensionalSizeFamily(TaskFamily):
    """Dimensional Size."""

    family = "Metric Comparison"
    subcategory = "Dimensional Size"
    slug = "dimensional_size"
    manipulations = ("pick_up", "put_back")

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cat = pick(rng, ["cube", "cylinder", "ball", "cone", "pyramid"])
        cols = colors(rng, 4)
        small = float(rng.uniform(0.045, 0.06))
        ratio = float(rng.uniform(1.2, 1.4))
        heading = float(rng.uniform(0, 360))
        eye = np.array([rng.uniform(-0.15, 0.15), rng.uniform(-0.1, 0.1)]) - unit(heading) * 0.55
        near_d = float(rng.uniform(0.38, 0.48))
        far_d = near_d * ratio * float(rng.uniform(1.0, 1.15))
        spread = float(rng.uniform(7, 11))
        side = float(rng.choice([-1.0, 1.0]))
        near_xy = eye + unit(heading + side * spread) * near_d
        far_xy = eye + unit(heading - side * spread) * far_d
        small_obj = make_object(cat, cols[0], (float(near_xy[0]), float(near_xy[1])), small, role="target")
        large_obj = make_object(
            cat, cols[1], (float(far_xy[0]), float(far_xy[1])), small * ratio, role="target"
        )
        placed = [((float(p[0]), float(p[1])), 0.08) for p in (near_xy, far_xy)]
        others = [x for x in ["cube", "cylinder", "ball", "cone", "pyramid"] if x != cat]
        extras = scatter_distractors(
            rng, cols[2:], others, placed, radius=0.05, gap=0.06, scale=(0.045, 0.07)
        )
        height = float(rng.uniform(0.12, 0.2))
        pitch = -math.degrees(math.atan2(height, (near_d + far_d) / 2))
        camera = Pose(
            x=r6(eye[0]),
            y=r6(eye[1]),
            z=r6(height),
            yaw=r6((heading + 180.0) % 360.0 - 180.0),
            pitch=15.0 * round(pitch / 15.0),
        )
        names = [small_obj.name, large_obj.name]
        if rng.integers(2):
            names.reverse()
        a, b = (n.replace("_", " ") for n in names)
        return TaskDraft(
            scene=SceneSpec(objects=[small_obj, large_obj, *extras], camera=camera),
            text=f"Which is larger: the {a} or the {b}?",
            contract=option_contract(names, "Answer with the object's name."),
            guidance=(
                "Objects farther away look smaller. Compare the two from a viewpoint where they are "
                "at about the same distance from you (move sideways until they are side by side), or "
                "from above. pick_up lifts an object; put_back returns it. " + CAMERA_GUIDANCE
            ),
            metadata={"objects": names, "larger": large_obj.name},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        def volume(name: str) -> float:
            lo, hi = world.sim.aabb(name)
            return float(np.prod(hi - lo))

        a, b = draft.metadata["objects"]
        return a if volume(a) > volume(b) else b

    def manipulable(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        return list(metadata["objects"])

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        a, b = metadata["objects"]
        return [
            ViewEvidence(objects=[a], label=f"{a} visible"),
            ViewEvidence(objects=[b], label=f"{b} visible"),
            AnyOf(
                options=[
                    ViewEvidence(objects=[a, b], max_depth_ratio=1.15),
                    ViewEvidence(objects=[a, b], max_pitch=-60.0),
                ],
                label="both seen at a similar distance, or from above",
            ),
        ]
