"""Spatial Relations / Geometric Configuration: what triangle do three objects form?

Scene: three objects at the corners of a triangle with sides of 0.2-0.45 m: equilateral (all
sides equal), isosceles (two legs equal, the base at most 0.75 or at least 1.3 times a leg) or
"random triangle" (every pair of sides differs by at least 20 per cent). The camera starts low
(about 10-16 deg elevation) from a random side, where foreshortening distorts the shape.

Ground truth: from the settled simulator poses, the three pairwise distances; two sides count
as equal when they differ by under 6 per cent of the longer one.

Decisive evidence (4 pieces): each object visible with at least half of its unoccluded pixel
area, and one steep frame (pitch <= -60 deg) showing all three together.
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
    orbit_pose,
    pick,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.linear_alignment import layout_evidence
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence

OPTIONS = ["equilateral", "isosceles", "random triangle"]
EQUAL_TOLERANCE = 0.06
"""Relative difference under which two sides count as equal."""


def classify(sides: list[float]) -> str:
    """``equilateral``, ``isosceles`` or ``random triangle`` for three side lengths."""
    a, b, cc = sorted(sides)

    def eq(x: float, y: float) -> bool:
        return abs(x - y) / max(x, y) < EQUAL_TOLERANCE

    equal_pairs = sum([eq(a, b), eq(b, cc), eq(a, cc)])
    if equal_pairs == 3 or (eq(a, b) and eq(b, cc)):
        return "equilateral"
    if equal_pairs >= 1:
        return "isosceles"
    return "random triangle"


def triangle(sides: tuple[float, float, float]) -> np.ndarray:
    """Corner points (3 x 2) of a triangle with sides (p0p1, p1p2, p2p0), centred on its centroid."""
    d01, d12, d20 = sides
    # p0 at the origin, p1 on +x; p2 from the law of cosines.
    x = (d01**2 + d20**2 - d12**2) / (2 * d01)
    y = math.sqrt(max(d20**2 - x**2, 0.0))
    pts = np.array([[0.0, 0.0], [d01, 0.0], [x, y]])
    return pts - pts.mean(axis=0)


class GeometricConfigurationFamily(TaskFamily):
    """Geometric Configuration."""

    family = "Spatial Relations"
    subcategory = "Geometric Configuration"
    slug = "geometric_configuration"
    designs = tuple(OPTIONS)
    """Answer designs: each kind of triangle in turn (version 10; drawn at random before)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        kind = pick(rng, OPTIONS)
        leg = float(rng.uniform(0.24, 0.32))
        if kind == "equilateral":
            sides = [leg, leg, leg]
        elif kind == "isosceles":
            base = leg * float(rng.choice([rng.uniform(0.55, 0.75), rng.uniform(1.3, 1.5)]))
            sides = [leg, leg, base]
        else:
            sides = [leg, leg * float(rng.uniform(1.22, 1.3)), leg * float(rng.uniform(1.5, 1.62))]
        order = rng.permutation(3)
        sides = [sides[int(i)] for i in order]
        pts = triangle((sides[0], sides[1], sides[2]))
        rot = float(rng.uniform(0, 2 * math.pi))
        r = np.array([[math.cos(rot), -math.sin(rot)], [math.sin(rot), math.cos(rot)]])
        centre = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        pts = pts @ r.T + centre
        cats = pick(rng, ["cube", "cylinder", "cone", "pyramid", "ball"], 3)
        cols = colors(rng, 3)
        objs = [
            make_object(
                cat,
                col,
                (float(p[0]), float(p[1])),
                float(rng.uniform(0.06, 0.075)),
                yaw=float(rng.uniform(0, 90)),
            )
            for cat, col, p in zip(cats, cols, pts, strict=True)
        ]
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.03),
            float(rng.uniform(0, 360)),
            float(rng.uniform(9, 15)),
            float(rng.uniform(0.68, 0.8)),
        )
        names = [o.name for o in objs]
        a, b, d = (n.replace("_", " ") for n in names)
        return TaskDraft(
            design=kind,
            scene=SceneSpec(objects=objs, camera=camera),
            text=(
                f"Do the {a}, the {b} and the {d} form an equilateral triangle, an isosceles triangle "
                "or a random triangle on the table?"
            ),
            contract=option_contract(
                OPTIONS,
                "equilateral: all three distances equal; isosceles: exactly two equal; "
                "random triangle: all three clearly different.",
            ),
            guidance=(
                "Perspective stretches and shrinks distances seen from a low angle. Compare the "
                "distances between the objects' centres from a view looking down on the table "
                "(move_up, then turn_down), and confirm from a second viewpoint. Treat small "
                "differences as equal. " + CAMERA_GUIDANCE
            ),
            metadata={"objects": names, "kind": kind},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        pts = [np.asarray(world.sim.pose_of(n)[0][:2]) for n in draft.metadata["objects"]]
        sides = [float(np.linalg.norm(pts[i] - pts[(i + 1) % 3])) for i in range(3)]
        return classify(sides)

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return layout_evidence(list(metadata["objects"]))
