"""Spatial Relations / Physical Contact: are two objects touching?

Scene: two objects (cubes, blocks or cylinders) one behind the other along the camera's initial
viewing direction, either touching or separated by a 1.5-4 cm gap, plus two distractors. From the
initial, low viewpoint the nearer object hides the place where they meet or part.

Ground truth: PyBullet's closest distance between the two collision shapes after settling;
``yes`` when it is under 3 mm.

Decisive evidence (3 pieces): each object visible with at least 40 per cent of its unoccluded
pixel area, and one frame showing both (same threshold) whose line of sight to them makes at
least 60 deg with the line joining their centres - a view across the gap, from the side or from
above.
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
    r6,
    scatter,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec, object_name, rounded, yaw_quat
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

CONTACT_TOLERANCE = 0.003
"""Metres: closer than this counts as touching."""


def _block(
    color: str, category: str, size: tuple[float, float, float], xy: np.ndarray, yaw: float
) -> ObjectSpec:
    shape = "cylinder" if category == "cylinder" else "box"
    return ObjectSpec(
        name=object_name(color, category),
        shape=shape,
        category=category,
        color=color,
        size=rounded(size),  # type: ignore[arg-type]
        position=(r6(xy[0]), r6(xy[1]), r6(size[2] / 2)),
        orientation=yaw_quat(yaw),
        mass=0.3,
        friction=0.8,
    )


def _dims(rng: np.random.Generator, category: str) -> tuple[float, float, float]:
    if category == "cube":
        s = float(rng.uniform(0.06, 0.08))
        return (s, s, s)
    if category == "block":
        return (float(rng.uniform(0.05, 0.07)), float(rng.uniform(0.1, 0.14)), float(rng.uniform(0.07, 0.1)))
    d = float(rng.uniform(0.06, 0.08))
    return (d, d, float(rng.uniform(0.07, 0.1)))


class PhysicalContactFamily(TaskFamily):
    """Physical Contact."""

    family = "Spatial Relations"
    subcategory = "Physical Contact"
    slug = "physical_contact"
    designs = ("yes", "no")  # touching / apart, alternating exactly

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 4)
        cat_a, cat_b = pick(rng, ["cube", "block", "cylinder"]), pick(rng, ["cube", "block", "cylinder"])
        size_a, size_b = _dims(rng, cat_a), _dims(rng, cat_b)
        # The nearer object is at least as tall as the far one so it hides the meeting line. The
        # two swap places rather than heights: a swapped height made "cubes" up to 50% off-cube.
        if size_b[2] > size_a[2]:
            (cat_a, size_a), (cat_b, size_b) = (cat_b, size_b), (cat_a, size_a)
        touching = bool(rng.integers(2))
        gap = 0.0 if touching else float(rng.uniform(0.015, 0.04))
        heading = float(rng.uniform(0, 360))  # direction the camera looks in
        axis = unit(heading)
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        pos_a = centre
        pos_b = centre + axis * (size_a[0] / 2 + size_b[0] / 2 + gap)
        a = _block(cols[0], cat_a, size_a, pos_a, heading)
        b = _block(cols[1], cat_b, size_b, pos_b, heading)
        placed = [((float(p[0]), float(p[1])), 0.12) for p in (pos_a, pos_b)]
        extras = []
        for col in cols[2:]:
            cat = pick(rng, ["ball", "cone", "pyramid"])
            (xy,) = scatter(rng, [0.05], placed=placed, gap=0.08)
            placed.append((xy, 0.05))
            extras.append(make_object(cat, col, xy, float(rng.uniform(0.045, 0.06)), role="distractor"))
        mid = (pos_a + pos_b) / 2
        camera = orbit_pose(
            (float(mid[0]), float(mid[1]), 0.04),
            heading + 180 + float(rng.uniform(-4, 4)),
            float(rng.uniform(12, 20)),
            float(rng.uniform(0.55, 0.7)),
        )
        an, bn = a.name.replace("_", " "), b.name.replace("_", " ")
        return TaskDraft(
            design="yes" if touching else "no",
            scene=SceneSpec(objects=[a, b, *extras], camera=camera),
            text=f"Are the {an} and the {bn} touching each other?",
            contract=yes_no_contract(),
            guidance=(
                "One object can hide the gap between two others. Look across the place where they "
                "meet: move sideways and turn back towards them, or look down from above. Answer yes "
                "only for physical contact and no only when you can see a gap. " + CAMERA_GUIDANCE
            ),
            metadata={"objects": [a.name, b.name], "axis": [float(axis[0]), float(axis[1]), 0.0], "gap": gap},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        a, b = draft.metadata["objects"]
        return "yes" if world.sim.distance(a, b) < CONTACT_TOLERANCE else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        a, b = metadata["objects"]
        return [
            ViewEvidence(objects=[a], min_fraction=0.4, label=f"{a} visible"),
            ViewEvidence(objects=[b], min_fraction=0.4, label=f"{b} visible"),
            ViewEvidence(
                objects=[a, b],
                min_fraction=0.4,
                axis=tuple(metadata["axis"]),  # type: ignore[arg-type]
                min_angle=60.0,
                label="both seen across the line joining them",
            ),
        ]
