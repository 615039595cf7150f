"""Metric Comparison / Spatial Distance: which of two objects is closer to a reference object?

Scene: a reference object and two candidates of one shape (colours tell them apart), one (0.14-0.2
m away) and the other 1.3-1.6 times as far. One candidate sits to the side of the reference as seen
from the initial camera, the other in front of or behind it, along the camera's line of sight,
where perspective shrinks the distance, so from the initial low view the one along the line of
sight looks closer. Which of the two is truly closer, and whether it is named first or second, take
turns by design (``designs``: before version 10 the closer one always stood to the side, so the
first view always pointed to the wrong option, and the option order was a coin flip: the second
option was right 22 of 30 times on ``test``).

Ground truth: from the settled simulator poses, the two centre-to-centre distances in the table
plane; the name of the candidate with the shorter one.

Decisive evidence (4 pieces): each of the three objects visible with at least half of its
unoccluded pixel area, and one steep frame (pitch <= -60 deg) showing all three.
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
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.linear_alignment import layout_evidence
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence


class SpatialDistanceFamily(TaskFamily):
    """Spatial Distance."""

    family = "Metric Comparison"
    subcategory = "Spatial Distance"
    slug = "spatial_distance"
    designs = ("side-first", "along-second", "side-second", "along-first")
    """Where the truly closer candidate stands (to the side, or along the line of sight) and
    whether it is the first or the second option."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, None)  # design_to_build draws one

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        design = self.design_to_build(rng, design)
        where, order = design.split("-")
        return self._draw(rng, design, closer_along=where == "along", closer_first=order == "first")

    def _draw(
        self, rng: np.random.Generator, design: str, *, closer_along: bool, closer_first: bool
    ) -> TaskDraft:
        # Both candidates share one shape, so no shape word can tell the answer (version 10 drew
        # three shapes, and on seed 6101 "ball" was right all 7 times it was offered: a text
        # prior right 14 of 16). They differ by colour only.
        ref_cat, cand_cat = pick(rng, ["cube", "cylinder", "ball", "cone", "pyramid"], 2)
        cats = [ref_cat, cand_cat, cand_cat]
        cols = colors(rng, 3)
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        ref_xy = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        near_d = float(rng.uniform(0.14, 0.2))
        far_d = near_d * float(rng.uniform(1.3, 1.6))
        along_sign, side_sign = float(rng.choice([-1.0, 1.0])), float(rng.choice([-1.0, 1.0]))
        near_dir, far_dir = (
            (fwd * along_sign, side * side_sign) if closer_along else (side * side_sign, fwd * along_sign)
        )
        near_xy = ref_xy + near_dir * near_d
        far_xy = ref_xy + far_dir * far_d
        ref = make_object(cats[0], cols[0], (float(ref_xy[0]), float(ref_xy[1])), 0.07, role="reference")
        near = make_object(
            cats[1], cols[1], (float(near_xy[0]), float(near_xy[1])), float(rng.uniform(0.06, 0.075))
        )
        far = make_object(
            cats[2], cols[2], (float(far_xy[0]), float(far_xy[1])), float(rng.uniform(0.06, 0.075))
        )
        camera = orbit_pose(
            (float(ref_xy[0]), float(ref_xy[1]), 0.03),
            heading + 180 + float(rng.uniform(-5, 5)),
            float(rng.uniform(8, 14)),
            float(rng.uniform(0.65, 0.8)),
        )
        cands = [near.name, far.name] if closer_first else [far.name, near.name]
        r, a, b = ref.name.replace("_", " "), cands[0].replace("_", " "), cands[1].replace("_", " ")
        return TaskDraft(
            design=design,
            scene=SceneSpec(objects=[ref, near, far], camera=camera),
            text=f"Which object is closer to the {r}: the {a} or the {b}?",
            contract=option_contract(cands, "Answer with the object's name."),
            guidance=(
                "Distances along your line of sight look shorter than distances across it. Compare "
                "the two distances from above (move_up, then turn_down) or from a viewpoint at right "
                "angles to the first. " + CAMERA_GUIDANCE
            ),
            metadata={"reference": ref.name, "candidates": cands, "objects": [ref.name, *cands]},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        ref = np.asarray(world.sim.pose_of(draft.metadata["reference"])[0][:2])
        a, b = draft.metadata["candidates"]
        da = float(np.linalg.norm(np.asarray(world.sim.pose_of(a)[0][:2]) - ref))
        db = float(np.linalg.norm(np.asarray(world.sim.pose_of(b)[0][:2]) - ref))
        return a if da < db else b

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return layout_evidence(list(metadata["objects"]))
