"""Enumerative Perception / Spatial Segmentation: count objects that stand in touching rows.

Scene: two rows of 2-3 identical target objects (one colour and shape for the whole question)
standing 2-6 mm apart, so that from a distance a row reads as one long object, and sometimes one
more target standing alone (the total, 4-7, takes turns by design); rows point in one common
direction. Distractors share the colour or the shape. The camera starts low, looking along the
rows, so each row's members also hide each other.

Ground truth: as in Counting with Occlusion, the number of matching bodies read from the simulator.

Decisive evidence (one piece per row): every member of the row visible with at least half of its
unoccluded pixel area in one frame taken looking down at least 45 degrees (pitch <= -45), where
the gaps between members show.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    PlacementError,
    colors,
    make_object,
    orbit_pose,
    pick,
    scatter,
    size_for,
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft
from eviseek.envs.tabletop.families.counting_with_occlusion import CountingFamily, CountScene
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

MAX_DRAWS = 64
"""Drafts drawn at most for one count before generation is called broken."""
ROW_SHAPES = ["cube", "cylinder", "ball"]
"""Shapes that stand steadily side by side (cones and pyramids would read apart anyway)."""


class SpatialSegmentationFamily(CountingFamily):
    """Spatial Segmentation."""

    family = "Enumerative Perception"
    subcategory = "Spatial Segmentation"
    slug = "spatial_segmentation"

    designs = ("4", "6", "5", "7")
    """The count, in turn (version 10): two rows of 2 or 3 and maybe one alone give 4-7, but drawn
    freely 5 and 6 come three times as often as 4 and 7 (on ``test`` the answer was 6 in 17 of
    30); the rows and the lone one are now drawn for the count the design asks."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, None)  # design_to_build draws one

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        design = self.design_to_build(rng, design)
        count = int(design)
        # Every split of the count into two rows of 2-3 and at most one lone object is equally likely.
        splits = [(a, b, c) for a in (2, 3) for b in (2, 3) for c in (0, 1) if a + b + c == count]
        for _ in range(MAX_DRAWS):
            a, b, lone = splits[int(rng.integers(len(splits)))]
            try:
                draft = self._draw(rng, (a, b), bool(lone))
            except PlacementError:
                continue
            return draft.model_copy(update={"design": design})
        raise RuntimeError(f"{self.slug}: no draft of design {design!r} in {MAX_DRAWS} draws")

    def _draw(self, rng: np.random.Generator, sizes: tuple[int, int], lone: bool) -> TaskDraft:
        shape = pick(rng, ROW_SHAPES)
        color = colors(rng, 1)[0]
        heading = float(rng.uniform(0, 360))
        along = unit(heading)
        n_rows = 2
        scene = CountScene(shape, color)
        rows: list[list[str]] = []
        region = (-0.45, 0.45, -0.32, 0.32)
        for centre, k in zip(scatter(rng, [0.14] * n_rows, region=region, gap=0.04), sizes, strict=True):
            scale = float(rng.uniform(0.045, 0.055))
            width = size_for(shape, scale)[0]
            row: list[str] = []
            for i in range(k):
                gap = float(rng.uniform(0.002, 0.006))
                offset = (i - (k - 1) / 2) * (width + gap)
                xy = (float(centre[0] + along[0] * offset), float(centre[1] + along[1] * offset))
                name = f"{color}_{shape}_{len(scene.targets)}"
                scene.objects.append(
                    make_object(shape, color, xy, scale, name=name, role="target", yaw=heading)
                )
                scene.targets.append(name)
                row.append(name)
            scene.placed.append((centre, 0.14))
            rows.append(row)
        if lone:
            (xy,) = scatter(rng, [0.04], placed=scene.placed, gap=0.06, region=region)
            scene.add_target(rng, xy, 0.055)
        scene.add_distractors(rng, region)
        camera = orbit_pose(
            (0.0, 0.0, 0.03), heading + 180 + float(rng.uniform(-8, 8)), float(rng.uniform(8, 12)), 1.0
        )
        draft = scene.draft(
            camera,
            "on the table?",
            "Identical objects stand in tight rows, almost touching, so a row can look like a single "
            "long object from afar or from its end. Go closer and look down on each row until the "
            "gaps between its members show, then count each object once. There is at least one.",
        )
        draft.metadata["rows"] = rows
        return draft

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        return [
            ViewEvidence(objects=row, max_pitch=-45.0, label=f"row {', '.join(row)} from above")
            for row in metadata["rows"]
        ]
