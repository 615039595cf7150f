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

import numpy as np

from eviseek.envs.tabletop.families._common import colors, pick, r6, scatter
from eviseek.envs.tabletop.families.base import TaskDraft
from eviseek.envs.tabletop.families.counting_with_occlusion import SHAPES, CountingFamily, CountScene
from eviseek.types import Pose


class MergedObservationFamily(CountingFamily):
    """Merged Observation."""

    family = "Enumerative Perception"
    subcategory = "Merged Observation"
    slug = "merged_observation"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        shape = pick(rng, SHAPES)
        color = colors(rng, 1)[0]
        n = int(rng.integers(3, 8))
        region = (-0.68, 0.68, -0.5, 0.5)
        scene = CountScene(shape, color)
        for xy in scatter(rng, [0.04] * n, region=region, gap=0.08):
            scene.add_target(rng, xy, 0.06)
        scene.add_distractors(rng, region)
        # Start close to the middle of one long edge, low, looking across the table at an angle.
        edge = float(rng.choice([-1.0, 1.0]))
        x = float(rng.uniform(-0.3, 0.3))
        yaw = (90.0 if edge < 0 else -90.0) + float(rng.choice([-30.0, 30.0]))
        camera = Pose(x=r6(x), y=r6(edge * 0.7), z=r6(float(rng.uniform(0.12, 0.18))), yaw=yaw, pitch=-15.0)
        return scene.draft(
            camera,
            "on the table in total?",
            "The objects are spread over the whole table and no single view shows them all. "
            "Turn and move to cover the table (or rise and look down), keep track of which "
            "objects you have already counted, and add up without double counting. There is "
            "at least one.",
        )
