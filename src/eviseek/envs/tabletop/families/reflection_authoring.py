"""Specular Reflection / Reflection Authoring: is the object in view seen directly or in a mirror?

Scene: an upright mirror (36-44 cm wide) and, in front of it, a camera held low (at the target's
mid-height), looking straight at the mirror. The target object either stands behind the camera,
so that the camera sees only its reflection ("yes"), or between the camera and the mirror on the
mirror's axis, so that the camera sees the object itself and the object hides its own reflection
("no"). Either way the first view shows exactly one copy of the target, over the mirror. One
fair coin per question picks the case. One or two distractors stand off to the side, and a gray
wall 42 cm behind the camera gives the mirror a background to show.

Ground truth: rendered from the simulator at the initial camera: "yes" when the target covers
more pixels seen in the mirror (``Frame.reflection``) than seen directly (``Frame.segmentation``).

Decisive evidence (1 piece): "yes": the target seen directly (with at least half of its
unoccluded pixel area), which needs turning round; "no": the target seen directly along a ray at
least 20 degrees off the mirror's axis, from where it and its reflection separate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_object,
    pick,
    r6,
    size_for,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families._mirror import make_backdrop, make_mirror
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import Pose

SHAPES = ["cube", "cylinder", "ball", "cone", "pyramid"]


def article(word: str) -> str:
    """``an`` before a vowel sound, else ``a``."""
    return "an" if word[0] in "aeio" else "a"


def seen_in_mirror(world: World, name: str, pose: Pose) -> bool:
    """Whether, from ``pose``, ``name`` shows more in a mirror than directly (rendered)."""
    frame = world.sim.render(pose)
    uid = world.sim.uid[name]
    direct = int(np.count_nonzero(frame.segmentation == uid))
    mirrored = 0 if frame.reflection is None else int(np.count_nonzero(frame.reflection == uid))
    return mirrored > direct


class ReflectionAuthoringFamily(TaskFamily):
    """Reflection Authoring."""

    family = "Specular Reflection"
    subcategory = "Reflection Authoring"
    slug = "reflection_authoring"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 3)
        category = pick(rng, SHAPES)
        through_mirror = bool(rng.integers(2))
        facing = float(rng.uniform(0, 360))
        n, across = unit(facing), unit(facing + 90)
        face = np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05)]) - n * 0.25
        mirror = make_mirror(
            (float(face[0]), float(face[1])),
            facing,
            float(rng.uniform(0.36, 0.44)),
            float(rng.uniform(0.26, 0.32)),
        )
        scale = float(rng.uniform(0.06, 0.07))
        height = size_for(category, scale)[2]
        dist = float(rng.uniform(0.5, 0.65))
        cam_xy = face + n * dist
        if through_mirror:
            t_xy = cam_xy + n * float(rng.uniform(0.12, 0.22)) + across * float(rng.uniform(-0.06, 0.06))
        else:
            t_xy = cam_xy - n * float(rng.uniform(0.18, 0.3))
        target = make_object(category, cols[0], (float(t_xy[0]), float(t_xy[1])), scale, role="target")
        # A wall behind the camera and the target gives the mirror something to show.
        objects = [mirror, target, make_backdrop(cam_xy + n * 0.42, facing + 180)]
        for k, col in enumerate(cols[1 : 1 + int(rng.integers(1, 3))]):
            side = 1.0 if k == 0 else -1.0
            d_xy = face + n * float(rng.uniform(0.15, 0.3)) + across * side * float(rng.uniform(0.28, 0.36))
            objects.append(
                make_object(
                    pick(rng, SHAPES),
                    col,
                    (float(d_xy[0]), float(d_xy[1])),
                    float(rng.uniform(0.045, 0.06)),
                    role="distractor",
                )
            )
        camera = Pose(
            x=r6(cam_xy[0]),
            y=r6(cam_xy[1]),
            z=r6(height / 2),
            yaw=r6((facing + 180 + 180) % 360 - 180),
            pitch=0.0,
        )
        return TaskDraft(
            scene=SceneSpec(objects=objects, camera=camera),
            text=(
                f"In this view you can see {article(cols[0])} {cols[0]} {category}. "
                "Are you seeing it through the mirror?"
            ),
            contract=yes_no_contract(),
            guidance=(
                "A mirror stands in front of you. Something seen over the mirror may be standing in "
                "front of it or may be a reflection of something behind you. Step sideways and look "
                "again (a real object and its reflection move apart), or turn round to find the "
                "object itself. " + CAMERA_GUIDANCE
            ),
            metadata={
                "target": target.name,
                "mirror": mirror.name,
                "designed_through_mirror": through_mirror,
                "mirror_axis": [r6(n[0]), r6(n[1]), 0.0],
            },
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return "yes" if seen_in_mirror(world, draft.metadata["target"], world.scene.camera) else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        t = metadata["target"]
        if metadata["designed_through_mirror"]:
            return [ViewEvidence(objects=[t], label=f"{t} itself, behind the first view")]
        axis = tuple(metadata["mirror_axis"])
        return [
            ViewEvidence(objects=[t], axis=axis, min_angle=20.0, label=f"{t} seen from off the mirror's axis")
        ]
