"""Enumerative Perception / Structural Enclosure: count objects, some of them inside open bins.

Scene: 2-6 target objects of one colour and shape, two or three open bins (static, walls taller
than any target) and distractors sharing the colour or the shape. At least one target, and at
most one per bin, sits inside a bin; at least one bin is empty, so seeing a bin is not seeing a
target. The camera starts low at the table's edge, from where a bin's walls hide what it holds.

Ground truth: as in Counting with Occlusion, the number of matching bodies read from the
simulator (shape from PyBullet's visual geometry, colour from the body's RGBA).

Decisive evidence (one piece per target): that target visible with at least half of its
unoccluded pixel area in some frame; for a target in a bin that takes a view over the rim.
"""

from __future__ import annotations

import numpy as np

from eviseek.envs.tabletop.colors import BOARD_COLORS
from eviseek.envs.tabletop.families._common import colors, orbit_pose, pick, scatter
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft
from eviseek.envs.tabletop.families.counting_with_occlusion import SHAPES, CountingFamily, CountScene

BIN_COLORS = list(BOARD_COLORS)  # named for how their walls render (see colors.SHADES)


class StructuralEnclosureFamily(CountingFamily):
    """Structural Enclosure."""

    family = "Enumerative Perception"
    subcategory = "Structural Enclosure"
    slug = "structural_enclosure"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        shape = pick(rng, SHAPES)
        color = colors(rng, 1)[0]
        n = int(rng.integers(2, 7))
        n_bins = int(rng.integers(2, 4))
        enclosed = int(rng.integers(1, min(n, n_bins - 1) + 1))
        region = (-0.55, 0.55, -0.4, 0.4)
        scene = CountScene(shape, color)
        for b, xy in enumerate(scatter(rng, [0.09] * n_bins, region=region, gap=0.06)):
            inner = float(rng.uniform(0.1, 0.12))
            depth = float(rng.uniform(0.09, 0.11))
            col = pick(rng, BIN_COLORS)
            bin_ = container(f"{col}_bin_{b}", col, xy, (inner, inner, depth))
            scene.objects.append(bin_)
            scene.placed.append((xy, 0.09))
            if b < enclosed:
                # Standing on the bin's floor, well below its rim.
                scene.add_target(rng, xy, 0.055)
                obj = scene.objects[-1]
                z = bin_.wall + obj.size[2] / 2
                scene.objects[-1] = obj.model_copy(
                    update={"position": (obj.position[0], obj.position[1], round(z, 6))}
                )
                scene.placed.pop()
        while len(scene.targets) < n:
            (xy,) = scatter(rng, [0.04], placed=scene.placed, gap=0.05, region=region)
            scene.add_target(rng, xy, 0.055)
        scene.add_distractors(rng, region)
        heading = float(rng.uniform(0, 360))
        camera = orbit_pose((0.0, 0.0, 0.04), heading, float(rng.uniform(6, 10)), 0.95)
        return scene.draft(
            camera,
            "on the table, including any inside the bins?",
            "Open bins may hold objects that their walls hide from a low view. Rise and look down "
            "into each bin as well as over the open table, and count each object once. There is "
            "at least one.",
        )
