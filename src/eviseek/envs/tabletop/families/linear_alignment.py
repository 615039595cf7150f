"""Spatial Relations / Linear Alignment: are three objects in a straight line on the table?

Scene: three objects of different colours and shapes laid out along a line, 0.17-0.26 m apart.
In half of the questions the middle object is pushed 0.07-0.14 m off the line. The camera starts
low (pitch -15 deg) looking across the line, so the offset lies along its depth axis where
perspective hides it.

Ground truth: from the settled simulator poses, the middle object's distance from the line through
the two end objects; ``yes`` when it is under 2 cm.

Decisive evidence (4 pieces): each of the three objects visible with at least half of its
unoccluded pixel area (3 pieces), and one frame looking steeply down (pitch <= -60 deg) that shows
all three objects at that visibility (the layout on the table). The initial view grades 0.5.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_object,
    orbit_pose,
    pick,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

OFF_LINE_TOLERANCE = 0.02
"""Metres: a middle object closer than this to the end-to-end line counts as aligned."""


def layout_evidence(names: list[str]) -> list[Evidence]:
    """Each object visible, plus one steep view showing all of them (shared by layout tasks)."""
    pieces: list[Evidence] = [ViewEvidence(objects=[n], label=f"{n} visible") for n in names]
    pieces.append(
        ViewEvidence(objects=list(names), max_pitch=-60.0, label="all objects seen together from above")
    )
    return pieces


def offset_from_line(a: np.ndarray, m: np.ndarray, b: np.ndarray) -> float:
    """Distance of point ``m`` from the line through ``a`` and ``b`` (2-D)."""
    d = b - a
    return float(abs(d[0] * (m - a)[1] - d[1] * (m - a)[0]) / (np.linalg.norm(d) + 1e-12))


class LinearAlignmentFamily(TaskFamily):
    """Linear Alignment."""

    family = "Spatial Relations"
    subcategory = "Linear Alignment"
    slug = "linear_alignment"
    designs = ("yes", "no")
    """Answer designs: yes/no in turn (coins gave "yes" 8 of 9 on ``paper``)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cats = pick(rng, ["cube", "cylinder", "cone", "pyramid"], 3)
        cols = colors(rng, 3)
        theta = float(rng.uniform(0, 180))
        u, n = unit(theta), unit(theta + 90)
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        s1, s2 = float(rng.uniform(0.17, 0.26)), float(rng.uniform(0.17, 0.26))
        aligned = bool(rng.integers(2))
        off = 0.0 if aligned else float(rng.uniform(0.07, 0.14)) * float(rng.choice([-1.0, 1.0]))
        pts = [centre - u * s1, centre + n * off, centre + u * s2]
        objs = [
            make_object(
                cat,
                col,
                (float(p[0]), float(p[1])),
                float(rng.uniform(0.06, 0.08)),
                yaw=float(rng.uniform(0, 90)),
                role="target",
            )
            for cat, col, p in zip(cats, cols, pts, strict=True)
        ]
        # Look along the line's normal from a low elevation: the offset lies in depth.
        side = float(rng.choice([-1.0, 1.0]))
        az = theta + 90 + (180 if side < 0 else 0) + float(rng.uniform(-8, 8))
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.03),
            az,
            float(rng.uniform(9, 16)),
            float(rng.uniform(0.6, 0.75)),
        )
        names = [o.name for o in objs]
        a, m, b = (n_.replace("_", " ") for n_ in names)
        return TaskDraft(
            design="yes" if aligned else "no",
            scene=SceneSpec(objects=objs, camera=camera),
            text=f"Are the {a}, the {m} and the {b} arranged in a straight line on the table?",
            contract=yes_no_contract(),
            guidance=(
                "Parallax can make three objects look lined up from one side when they are not. "
                "Judge the layout from a view that looks down on the table (move_up, then turn_down) "
                "and check from more than one direction. Answer yes only if the middle object lies on "
                "the line joining the other two. " + CAMERA_GUIDANCE
            ),
            metadata={"objects": names, "aligned": aligned},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        a, m, b = (np.asarray(world.sim.pose_of(n)[0][:2]) for n in draft.metadata["objects"])
        return "yes" if offset_from_line(a, m, b) < OFF_LINE_TOLERANCE else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return layout_evidence(list(metadata["objects"]))


__all__ = ["LinearAlignmentFamily", "layout_evidence", "offset_from_line"]
