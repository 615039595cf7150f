"""Metric Comparison / Dimensional Size: which of two same-shaped objects is larger?

Scene: two objects of the same shape and different colours, one 1.35-1.5 times the other's size,
one nearer the initial camera than the other, and the nearer one always looks 1.6-1.95 times as
big as the farther one from there. Two designs take turns: the larger one stands nearer (1.2-1.3
times farther away than the nearer one is the other; ``larger-nearer``), or the larger one stands
so far back (2.0-2.6 times the nearer one's distance) that it looks the smaller
(``larger-farther``). Either way the bigger-looking one is the nearer, lower one in the picture, so
neither apparent size nor place in the picture says which is larger; only judging the distances
does. The first view looks 15 degrees down from 12-20 cm up. Two distractors of other shapes stand around.

Ground truth: from the simulator, the volume of each object's axis-aligned bounding box after
settling; the larger one's name.

Decisive evidence (3 pieces): each object visible with at least half of its unoccluded pixel
area, and one frame showing both where their depths differ by at most 15 per cent (a fair side
by side comparison) or that looks steeply down (pitch <= -60 deg).
"""

from __future__ import annotations

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

    designs = ("larger-nearer", "larger-farther")

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, None)  # design_to_build draws one

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        design = self.design_to_build(rng, design)
        larger_nearer = design == "larger-nearer"
        cat = pick(rng, ["cube", "cylinder", "ball", "cone", "pyramid"])
        cols = colors(rng, 4)
        small = float(rng.uniform(0.045, 0.055))
        ratio = float(rng.uniform(1.35, 1.5))
        heading = float(rng.uniform(0, 360))
        eye = np.array([rng.uniform(-0.15, 0.15), rng.uniform(-0.1, 0.1)]) - unit(heading) * 0.5
        near_d = float(rng.uniform(0.26, 0.3))
        # How much bigger the nearer one looks than the farther one (drawn alike in both designs).
        looks = float(rng.uniform(1.6, 1.95))
        # Apparent size goes as size over distance: solve for the farther one's distance.
        far_d = near_d * looks * (1 / ratio if larger_nearer else ratio)
        spread = float(rng.uniform(7, 11))
        side = float(rng.choice([-1.0, 1.0]))
        near_xy = eye + unit(heading + side * spread) * near_d
        far_xy = eye + unit(heading - side * spread) * far_d
        small_xy, large_xy = (far_xy, near_xy) if larger_nearer else (near_xy, far_xy)
        small_obj = make_object(cat, cols[0], (float(small_xy[0]), float(small_xy[1])), small, role="target")
        large_obj = make_object(
            cat, cols[1], (float(large_xy[0]), float(large_xy[1])), small * ratio, role="target"
        )
        placed = [((float(p[0]), float(p[1])), 0.08) for p in (near_xy, far_xy)]
        others = [x for x in ["cube", "cylinder", "ball", "cone", "pyramid"] if x != cat]
        extras = scatter_distractors(
            rng, cols[2:], others, placed, radius=0.05, gap=0.06, scale=(0.045, 0.07)
        )
        camera = Pose(
            x=r6(eye[0]),
            y=r6(eye[1]),
            z=r6(float(rng.uniform(0.12, 0.2))),
            yaw=r6((heading + 180.0) % 360.0 - 180.0),
            pitch=-15.0,
        )
        names = [small_obj.name, large_obj.name]
        if rng.integers(2):
            names.reverse()
        a, b = (n.replace("_", " ") for n in names)
        return TaskDraft(
            design=design,
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
