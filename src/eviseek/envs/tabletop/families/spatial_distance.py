"""Metric Comparison / Spatial Distance: which of two objects is closer to a reference object?

Scene: a reference object and two candidates. The truly closer candidate (0.14-0.2 m away) sits
to the side of the reference as seen from the initial camera; the farther one (1.3-1.6 times as
far) sits in front of or behind it, along the camera's line of sight, where perspective shrinks
the distance. From the initial low view the farther candidate therefore looks closer.

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

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cats = pick(rng, ["cube", "cylinder", "ball", "cone", "pyramid"], 3)
        cols = colors(rng, 3)
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        ref_xy = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        near_d = float(rng.uniform(0.14, 0.2))
        far_d = near_d * float(rng.uniform(1.3, 1.6))
        near_xy = ref_xy + side * near_d * float(rng.choice([-1.0, 1.0]))
        far_xy = ref_xy + fwd * far_d * float(rng.choice([-1.0, 1.0]))
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
        cands = [near.name, far.name]
        if rng.integers(2):
            cands.reverse()
        r, a, b = ref.name.replace("_", " "), cands[0].replace("_", " "), cands[1].replace("_", " ")
        return TaskDraft(
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
