"""Specular Reflection / Reflection Authoring: is the object in view seen directly or in a mirror?

Scene: an upright mirror (36-44 cm wide) 45-55 cm in front of a camera held low (1.5-4 cm up,
drawn alike in both cases) and looking at the mirror, turned 3-6 degrees to one side and tilted
up to 6 degrees up or down (so where the target shows, up or down, does not tell its distance).
The target object either stands 8-18 cm behind the camera, so that the camera sees only its
reflection ("yes"), or 30-38 cm ahead of it on the line from the camera square to the mirror, so
that the camera sees the object itself, and the object hides most or all of its own reflection,
which lies straight behind it and shows smaller ("no"). Either way the first view shows the
target over the mirror. Apparent size does not tell the two apart: the target's size is its
apparent size (0.05-0.07 of its distance, drawn the same way in both cases) times the distance
its light travels to the camera, so a reflected target is a large object far away and a directly
seen one a small object near by. Two distractors of other colours, sized the same way, are of
both kinds: one stands ahead of the camera, off the mirror's axis (seen directly and in the
mirror), one behind the camera (seen only in the mirror). The designs take turns (``yes``,
``no``), and a gray wall 42 cm behind the camera gives the mirror a background to show. The
camera may go down to 1 cm above the table here.

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
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families._mirror import make_backdrop, make_mirror
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import CameraBounds, SceneSpec
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

    designs = ("yes", "no")

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, str(rng.choice(self.designs)))

    # Long because it draws one question's scene as a fixed sequence of random draws, then writes the
    # text and metadata from them. The draw order is part of what a seed means (reordering changes
    # every generated question, and with it the generator version), so the steps stay in one
    # sequence that reads top to bottom.
    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        if design is None:
            return self.generate(rng)
        if design not in self.designs:
            raise RuntimeError(f"{self.slug}: unknown design {design!r}")
        through_mirror = design == "yes"
        cols = colors(rng, 3)
        category = pick(rng, SHAPES)
        facing = float(rng.uniform(0, 360))
        n, across = unit(facing), unit(facing + 90)
        face = np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05)]) - n * 0.25
        mirror = make_mirror(
            (float(face[0]), float(face[1])),
            facing,
            float(rng.uniform(0.36, 0.44)),
            float(rng.uniform(0.26, 0.32)),
        )
        dist = float(rng.uniform(0.45, 0.55))
        cam_xy = face + n * dist

        def sized(travel: float) -> float:
            # The object's size: an apparent size drawn alike for every object, times the distance
            # its light travels to the camera (directly, or by way of the mirror).
            return float(rng.uniform(0.05, 0.07)) * travel

        if through_mirror:
            behind = float(rng.uniform(0.08, 0.18))
            t_xy = cam_xy + n * behind
            scale = sized(2 * dist + behind)
        else:
            ahead = float(rng.uniform(0.3, 0.38))
            t_xy = cam_xy - n * ahead
            scale = sized(ahead)
        target = make_object(category, cols[0], (float(t_xy[0]), float(t_xy[1])), scale, role="target")
        # A wall behind the camera and the target gives the mirror something to show.
        objects = [mirror, target, make_backdrop(cam_xy + n * 0.42, facing + 180)]
        sides = [1.0, -1.0] if rng.integers(2) else [-1.0, 1.0]
        # Distractors of both kinds: one ahead of the camera, off the axis (seen directly and in
        # the mirror), one behind the camera and off to the side (seen only in the mirror).
        ahead_d = float(rng.uniform(0.25, 0.38))
        d_direct = cam_xy - n * ahead_d + across * sides[0] * float(rng.uniform(0.1, 0.14))
        behind_d = float(rng.uniform(0.08, 0.2))
        d_mirror = cam_xy + n * behind_d + across * sides[1] * float(rng.uniform(0.1, 0.16))
        for col, xy, travel in (
            (cols[1], d_direct, ahead_d),
            (cols[2], d_mirror, 2 * dist + behind_d),
        ):
            objects.append(
                make_object(
                    pick(rng, SHAPES), col, (float(xy[0]), float(xy[1])), sized(travel), role="distractor"
                )
            )
        turn = float(rng.uniform(3, 6)) * float(rng.choice([-1.0, 1.0]))
        camera = Pose(
            x=r6(cam_xy[0]),
            y=r6(cam_xy[1]),
            z=r6(float(rng.uniform(0.015, 0.04))),
            yaw=r6((facing + 180 + 180 + turn) % 360 - 180),
            pitch=r6(float(rng.uniform(-6, 6))),
        )
        return TaskDraft(
            design=design,
            scene=SceneSpec(objects=objects, camera=camera, bounds=CameraBounds(z=(0.01, 1.6))),
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
