"""Enumerative Perception / Merged Observation: count objects spread wider than one view.

Scene: 3-7 target objects of one colour and shape spread over the whole table, with distractors
sharing the colour or the shape. The camera starts low near one edge of the table, so no single
view from there covers every target; the count must merge several views without counting an
object twice.

Ground truth: as in Counting with Occlusion, the number of matching bodies read from the simulator.

Decisive evidence (one piece per target): that target visible with at least half of its
unoccluded pixel area in some frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families import _common as c
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.families.counting_with_occlusion import (
    SHAPES,
    count_contract,
    count_matching,
    distractors,
)
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import Pose


class Family(TaskFamily):
    """Merged Observation."""

    family = "Enumerative Perception"
    subcategory = "Merged Observation"
    slug = "merged_observation"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        shape = c.pick(rng, SHAPES)
        color = c.colors(rng, 1)[0]
        n = int(rng.integers(3, 8))
        region = (-0.68, 0.68, -0.5, 0.5)
        placed: list[tuple[tuple[float, float], float]] = []
        objs: list[ObjectSpec] = []
        targets: list[str] = []
        for xy in c.scatter(rng, [0.04] * n, region=region, gap=0.08):
            placed.append((xy, 0.04))
            name = f"{color}_{shape}_{len(targets)}"
            objs.append(
                c.make_object(shape, color, xy, float(rng.uniform(0.045, 0.06)), name=name, role="target")
            )
            targets.append(name)
        objs += distractors(rng, shape, color, int(rng.integers(2, 5)), placed, region)
        # Start close to the middle of one long edge, low, looking across the table at an angle.
        edge = float(rng.choice([-1.0, 1.0]))
        x = float(rng.uniform(-0.3, 0.3))
        yaw = (90.0 if edge < 0 else -90.0) + float(rng.choice([-30.0, 30.0]))
        camera = Pose(
            x=c.r6(x), y=c.r6(edge * 0.7), z=c.r6(float(rng.uniform(0.12, 0.18))), yaw=yaw, pitch=-15.0
        )
        plural = {
            "ball": "balls",
            "cube": "cubes",
            "cylinder": "cylinders",
            "cone": "cones",
            "pyramid": "pyramids",
        }[shape]
        return TaskDraft(
            scene=SceneSpec(objects=objs, camera=camera),
            text=f"How many {color} {plural} are on the table in total?",
            contract=count_contract(),
            guidance=(
                "The objects are spread over the whole table and no single view shows them all. "
                "Turn and move to cover the table (or rise and look down), keep track of which "
                "objects you have already counted, and add up without double counting. There is "
                "at least one. " + c.CAMERA_GUIDANCE
            ),
            metadata={"targets": targets, "category": shape, "color": color},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        return str(count_matching(world, draft.metadata["category"], draft.metadata["color"]))

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return [ViewEvidence(objects=[t], label=f"{t} visible") for t in metadata["targets"]]
