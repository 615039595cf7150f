"""Specular Reflection / Reflection Authoring: is the object in view seen directly or in a mirror?

Scene (version 10): an upright mirror (36-44 cm wide) 45-55 cm in front of a camera held low
(1.5-4 cm up, drawn alike in both cases) and looking at the mirror, turned 3-6 degrees to one side
(the side takes turns with the answer by design) and tilted up to 6 degrees up or down. A low board
(1.2-2 cm taller than the camera's height) stands across the view 16-20 cm in front of the mirror:
it hides, in both cases alike, the mirror's lower edge and every place where an object meets the
table beyond it, which in version 9 told the cases apart (a directly seen object stands nearer
than the mirror, so its lowest pixel lay below the mirror's: right 30 of 30 on ``test``). The
target either stands 8-18 cm behind the camera, so that the camera sees only its reflection
("yes"), or between the board and the mirror on the line from the camera square to the mirror,
so that the camera sees the object itself, and the object hides most or all of its own reflection,
which lies straight behind it and shows smaller ("no"). Either way the first view shows the
target over the board, in front of the mirror. Apparent size does not tell the two apart: every
object is tall enough to rise above the board's edge by an angle drawn the same way in both
cases (0.05-0.08 rad) at the distance its light travels to the camera, so a reflected target is a
large object far away and a directly seen one a small object near by. Two distractors of other
colours, sized the same way, are of both kinds: one between the board and the mirror, off the
axis (seen directly and in the mirror), one behind the camera and off to the side (seen only in
the mirror). The designs take turns (``yes``, ``no``, each with either turn), and a gray wall 42 cm
behind the camera gives the mirror a background to show. The camera may go down to 1 cm above
the table here.

Ground truth: rendered from the simulator at the initial camera: "yes" when the target covers
more pixels seen in the mirror (``Frame.reflection``) than seen directly (``Frame.segmentation``).

Decisive evidence (1 piece): "yes": the target seen directly (with at least half of its
unoccluded pixel area), which needs turning round; "no": the target seen directly along a ray at
least 20 degrees off the mirror's axis, from where it and its reflection separate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.colors import BOARD_COLORS
from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_board,
    make_object,
    pick,
    r6,
    size_for,
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

    designs = ("yes-left", "no-right", "no-left", "yes-right")
    """The answer, and the way the camera is turned off the mirror's axis: both take turns, so
    where the target and the mirror show left or right cannot follow the answer by chance (on
    seed 4242 the turn's coin had agreed with the answer 22 times in 30, and a learner read it
    off the target's column)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, None)  # design_to_build draws one

    # Long because it draws one question's scene as a fixed sequence of random draws, then writes the
    # text and metadata from them. The draw order is part of what a seed means (reordering changes
    # every generated question, and with it the generator version), so the steps stay in one
    # sequence that reads top to bottom.
    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        design = self.design_to_build(rng, design)
        through_mirror = design.startswith("yes")
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
        eye_h = float(rng.uniform(0.015, 0.04))
        # A low board across the view in front of the mirror hides every base on the table beyond
        # it and the mirror's own lower edge, in both cases alike: where an object meets the table
        # (nearer than the mirror when seen directly, farther when reflected) told the two apart
        # in version 9 (the target's lowest pixel below the mirror's: seen directly, 30 of 30).
        fence_gap = float(rng.uniform(0.16, 0.2))  # from the mirror's face
        fence_h = eye_h + float(rng.uniform(0.012, 0.02))
        fence_at = face + n * fence_gap
        fence_angle = (fence_h - eye_h) / (dist - fence_gap)  # of its top edge above level

        def sized(cat: str, travel: float) -> float:
            # The object's scale: tall enough that it shows above the board by an angle drawn
            # alike for every object, at the distance its light travels to the camera (directly,
            # or by way of the mirror); a reflected object is a large one far away.
            rise = fence_angle + float(rng.uniform(0.05, 0.08))
            return (eye_h + rise * travel) / size_for(cat, 1.0)[2]

        if through_mirror:
            behind = float(rng.uniform(0.08, 0.18))
            t_xy = cam_xy + n * behind
            travel = 2 * dist + behind
        else:
            # Between the board and the mirror, on the line from the camera square to the mirror.
            before = float(rng.uniform(0.35, 0.55)) * fence_gap
            t_xy = face + n * before
            travel = dist - before
        target = make_object(
            category, cols[0], (float(t_xy[0]), float(t_xy[1])), sized(category, travel), role="target"
        )
        board_col = pick(rng, list(BOARD_COLORS))
        fence = make_board(
            f"{board_col}_board",
            board_col,
            (float(fence_at[0]), float(fence_at[1])),
            (0.015, 0.6, fence_h),
            facing,
        )
        # A wall behind the camera and the target gives the mirror something to show.
        objects = [mirror, fence, target, make_backdrop(cam_xy + n * 0.42, facing + 180)]
        sides = [1.0, -1.0] if rng.integers(2) else [-1.0, 1.0]
        # Distractors of both kinds: one between the board and the mirror, off the axis (seen
        # directly and in the mirror), one behind the camera and off to the side (seen only in
        # the mirror).
        before_d = float(rng.uniform(0.35, 0.55)) * fence_gap
        d_direct = face + n * before_d + across * sides[0] * float(rng.uniform(0.15, 0.19))
        behind_d = float(rng.uniform(0.08, 0.2))
        d_mirror = cam_xy + n * behind_d + across * sides[1] * float(rng.uniform(0.2, 0.26))
        for col, xy, far in ((cols[1], d_direct, dist - before_d), (cols[2], d_mirror, 2 * dist + behind_d)):
            cat = pick(rng, SHAPES)
            objects.append(
                make_object(cat, col, (float(xy[0]), float(xy[1])), sized(cat, far), role="distractor")
            )
        turn = float(rng.uniform(3, 6)) * (1.0 if design.endswith("left") else -1.0)
        camera = Pose(
            x=r6(cam_xy[0]),
            y=r6(cam_xy[1]),
            z=r6(eye_h),
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
