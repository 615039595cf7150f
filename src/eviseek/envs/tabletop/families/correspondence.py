"""Specular Reflection / Correspondence: which of three identical objects is the one in the mirror?

Scene: three identical objects (one colour, shape and size) stand in a row across the camera's
view, 18-20 cm apart, 45-55 cm ahead of it. Farther on, a narrow upright mirror (8-10 cm of
glass), turned up to 12 degrees off facing the camera, shows the reflection of exactly one of
them: the generator places the mirror where that object's reflection falls, and keeps the centres
of the other two objects' reflections at least 3.5 cm off its reflecting area. A gray wall 30 cm
behind the camera gives the mirror a background to show. The question asks which one it
is, as seen in the first view: left, middle or right. The three answers take turns by design
(``designs``): drawn by a coin, "middle" came out 55 times in 215 (p = 0.009), because a middle
object lines up with the mirror in the first view more often and such drafts are drawn again.

Ground truth: rendered from the simulator at the initial camera: the object with the most pixels
seen in the mirror (``Frame.reflection``), named by the left-to-right order of the three objects'
directly seen pixels in the same frame.

Decisive evidence (1 piece): the answer object and the mirror seen together (each with at least
half of its unoccluded pixel area) along a ray within 25 degrees of the line from the object to
where its reflection shows, i.e. from behind the object, where object and reflection line up.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.colors import OBJECT_COLORS
from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    PlacementError,
    make_object,
    option_contract,
    pick,
    r6,
    size_for,
    unit,
)
from eviseek.envs.tabletop.families._mirror import (
    face_margin,
    make_backdrop,
    make_mirror,
    mirror_hit,
    plane_of,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.sim.optics import MIRROR_FRAME
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import Pose

SHAPES = ["cube", "cylinder", "ball", "cone", "pyramid"]
PLURAL = {"cube": "cubes", "cylinder": "cylinders", "ball": "balls", "cone": "cones", "pyramid": "pyramids"}
POSITIONS = ["left", "middle", "right"]


def reflected_position(world: World, names: list[str], pose: Pose) -> str:
    """Left, middle or right: which of ``names`` shows most in a mirror from ``pose`` (rendered)."""
    frame = world.sim.render(pose)
    assert frame.reflection is not None, "no mirror face in the first view"
    uids = [world.sim.uid[n] for n in names]
    shown = [int(np.count_nonzero(frame.reflection == u)) for u in uids]
    columns = [float(np.nonzero(frame.segmentation == u)[1].mean()) for u in uids]
    rank = sorted(range(3), key=lambda i: columns[i])
    return POSITIONS[rank.index(int(np.argmax(shown)))]


class CorrespondenceFamily(TaskFamily):
    """Correspondence."""

    family = "Specular Reflection"
    subcategory = "Correspondence"
    slug = "correspondence"
    designs = tuple(POSITIONS)

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, POSITIONS[int(rng.integers(3))])

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        if design is None:
            return self.generate(rng)
        if design not in POSITIONS:
            raise RuntimeError(f"{self.slug}: unknown design {design!r}")
        color = pick(rng, list(OBJECT_COLORS))
        category = pick(rng, SHAPES)
        answer = POSITIONS.index(design)
        scale = float(rng.uniform(0.05, 0.06))
        for _ in range(400):
            heading = float(rng.uniform(0, 360))  # the camera looks along this direction
            fwd, right = unit(heading), unit(heading - 90)
            eye = np.array(
                [*(-fwd * 0.45 + rng.uniform(-0.05, 0.05, size=2)), float(rng.uniform(0.25, 0.32))]
            )
            spacing = float(rng.uniform(0.18, 0.2))
            row = eye[:2] + fwd * float(rng.uniform(0.45, 0.55))
            spots = [row + right * (i - 1) * spacing for i in range(3)]  # left to right as seen
            centres = [np.array([s[0], s[1], size_for(category, scale)[2] / 2]) for s in spots]
            facing = heading + 180 + float(rng.uniform(-12, 12))
            glass = float(rng.uniform(0.08, 0.1))
            probe = make_mirror(tuple(eye[:2] + fwd * float(rng.uniform(0.95, 1.05))), facing, 4.0, 0.3)
            plane = plane_of(probe)
            hit = mirror_hit(plane, eye, centres[answer])
            if hit is None:
                continue
            mirror = make_mirror((float(hit[0]), float(hit[1])), facing, glass + 2 * MIRROR_FRAME, 0.3)
            plane = plane_of(mirror)
            margins = [
                face_margin(plane, h) if (h := mirror_hit(plane, eye, c)) is not None else -1.0
                for c in centres
            ]
            others_off = all(margins[i] < -0.035 for i in range(3) if i != answer)
            if margins[answer] > 0.02 and others_off:
                break
        else:  # pragma: no cover - the ranges above always leave room
            raise PlacementError("could not place a mirror that shows exactly one object")
        objects = [
            make_object(category, color, (float(s[0]), float(s[1])), scale, name=f"{color}_{category}_{i}")
            for i, s in enumerate(spots)
        ]
        yaw = (heading + 180) % 360 - 180
        pitch = float(np.degrees(np.arctan2(0.12 - eye[2], 0.75)))
        camera = Pose(x=r6(eye[0]), y=r6(eye[1]), z=r6(eye[2]), yaw=r6(yaw), pitch=r6(pitch))
        axis = mirror_hit(plane, eye, centres[answer])
        assert axis is not None
        line = axis - centres[answer]
        return TaskDraft(
            design=design,
            scene=SceneSpec(
                objects=[mirror, *objects, make_backdrop(eye[:2] - fwd * 0.3, heading)], camera=camera
            ),
            text=(
                f"You can see a mirror and three {color} {PLURAL[category]}. Which of the three "
                f"{PLURAL[category]} is the one you see reflected in the mirror: the left, middle, "
                "or right one?"
            ),
            contract=option_contract(POSITIONS, "Answer left, middle or right."),
            guidance=(
                "The three objects look the same, so the reflection alone does not say which one it "
                "is. Move so that one object and the mirror line up, or step sideways and watch "
                "which reflection moves with which object. Left, middle and right are as seen in "
                "the first view. " + CAMERA_GUIDANCE
            ),
            metadata={
                "objects": [o.name for o in objects],
                "mirror": mirror.name,
                "designed_answer": POSITIONS[answer],
                "answer_object": objects[answer].name,
                "reflection_line": [r6(v) for v in line / np.linalg.norm(line)],
            },
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return reflected_position(world, draft.metadata["objects"], world.scene.camera)

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        obj = metadata["answer_object"]
        return [
            ViewEvidence(
                objects=[obj, metadata["mirror"]],
                axis=tuple(metadata["reflection_line"]),
                max_angle=25.0,
                label=f"{obj} lined up with its reflection",
            )
        ]
