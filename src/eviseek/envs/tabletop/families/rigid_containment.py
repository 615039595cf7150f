"""Physical Structure / Rigid Containment: does an object fit inside a container?

Scene: an open bin (static) and a candidate object (cube, ball or cylinder) whose footprint is
either 80-92 per cent of the bin's inner opening (it fits) or 108-125 per cent (it does not),
placed at a different distance from the initial camera than the bin so perspective hides the
difference; cubes are turned to line up with the bin. Two distractors stand elsewhere.

Ground truth: by simulation. ``put_inside(object, bin)`` is run in the simulator exactly as the
agent's action would run it (release above the opening, simulate to rest); ``yes`` when the
object ends inside the walls, below the rim.

Decisive evidence (3 pieces): the object visible (>= 50% of its unoccluded area), the bin visible,
and either a frame taken after a ``put_inside`` of the object showing both, or a frame showing
both at depths within 15 per cent of each other while looking down at least 30 deg (a fair size
comparison that sees into the opening).
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
    scatter_distractors,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import AnyOf, Evidence, OutcomeEvidence, ViewEvidence


class RigidContainmentFamily(TaskFamily):
    """Rigid Containment."""

    family = "Physical Structure"
    subcategory = "Rigid Containment"
    slug = "rigid_containment"
    manipulations = ("pick_up", "put_inside", "place_on_table", "put_back")

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 4)
        cat = pick(rng, ["cube", "ball", "cylinder"])
        inner_w = float(rng.uniform(0.07, 0.09))
        fits = bool(rng.integers(2))
        ratio = float(rng.uniform(0.8, 0.92)) if fits else float(rng.uniform(1.08, 1.25))
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        # One of the two stands 0.2-0.3 m nearer the camera than the other.
        depth = float(rng.uniform(0.2, 0.3)) * float(rng.choice([-1.0, 1.0]))
        bin_xy = centre + fwd * depth / 2 + side * 0.08
        obj_xy = centre - fwd * depth / 2 - side * 0.08
        box = container(
            f"{cols[0]}_bin",
            cols[0],
            (float(bin_xy[0]), float(bin_xy[1])),
            (inner_w, inner_w, 0.07),
            yaw=heading,
        )
        obj = make_object(
            cat, cols[1], (float(obj_xy[0]), float(obj_xy[1])), inner_w * ratio, yaw=heading, role="target"
        )
        placed = [((float(bin_xy[0]), float(bin_xy[1])), 0.09), ((float(obj_xy[0]), float(obj_xy[1])), 0.08)]
        extras = scatter_distractors(
            rng, cols[2:], ["cone", "pyramid"], placed, radius=0.04, gap=0.06, scale=0.05
        )
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.04),
            heading + 180,
            float(rng.uniform(8, 14)),
            float(rng.uniform(0.6, 0.75)),
        )
        on, bn = obj.name.replace("_", " "), box.name.replace("_", " ")
        return TaskDraft(
            scene=SceneSpec(objects=[box, obj, *extras], camera=camera),
            text=f"Does the {on} fit inside the {bn}?",
            contract=yes_no_contract(),
            guidance=(
                "Sizes are hard to compare when one object is nearer to you. Compare the object with "
                "the bin's opening from a view where both are at the same distance, looking down into "
                "the bin, or test it: put_inside(object, target) drops the object into the bin and "
                "reports whether it ended inside; put_back returns it. " + CAMERA_GUIDANCE
            ),
            metadata={"object": obj.name, "container": box.name, "fits_by_design": fits},
        )

    def manipulable(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        return [metadata["object"]]

    def targets(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        return [metadata["container"]]

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        m = draft.metadata
        fb = world.manipulator.execute(
            "put_inside", {"object": m["object"], "target": m["container"]}, [m["object"]], [m["container"]]
        )
        return "yes" if fb.success else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        o, b = metadata["object"], metadata["container"]
        return [
            ViewEvidence(objects=[o], label=f"{o} visible"),
            ViewEvidence(objects=[b], label=f"{b} visible"),
            AnyOf(
                options=[
                    OutcomeEvidence(action="put_inside", args={"object": o}, show=[o, b], min_fraction=0.3),
                    ViewEvidence(objects=[o, b], max_depth_ratio=1.15, max_pitch=-30.0),
                ],
                label="the put_inside outcome seen, or both compared side by side from above",
            ),
        ]
