"""Enumerative Perception / Illumination Variability: count objects of one colour under changed light.

Scene: 2-6 target objects of one colour and shape, two boards (static) with at least one target
right behind one of them, and 3-5 objects of the same shape in colours that a tinted, dim light
makes hard to tell from the target colour (for red: orange, pink, brown; see :data:`CONFUSABLE`).
The reference image shows the first view under the usual white light; the episode runs under a
changed light: dimmer (ambient 0.2-0.3, diffuse 0.35-0.5), tinted warm or cool, and coming from
low on one side (``SceneSpec.light``; the reference image's light is ``reference_light``). The
colour word in the question is the one the reference image shows.

Ground truth: as in Counting with Occlusion, the number of matching bodies read from the simulator
(shape from PyBullet's visual geometry, colour from the body's RGBA, which lighting never changes).

Decisive evidence (one piece per target): that target visible with at least half of its
unoccluded pixel area in some frame.
"""

from __future__ import annotations

import numpy as np

from eviseek.envs.tabletop.families._common import (
    make_board,
    make_object,
    orbit_pose,
    pick,
    r6,
    scatter,
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft
from eviseek.envs.tabletop.families.counting_with_occlusion import SHAPES, CountingFamily, CountScene
from eviseek.envs.tabletop.scene import LightSpec

CONFUSABLE: dict[str, list[str]] = {
    "red": ["orange", "pink", "brown"],
    "orange": ["red", "yellow", "brown"],
    "yellow": ["orange", "green"],
    "green": ["cyan", "yellow"],
    "blue": ["purple", "cyan"],
    "purple": ["blue", "pink"],
    "cyan": ["green", "blue"],
    "pink": ["red", "purple", "orange"],
    "brown": ["red", "orange"],
}
"""Palette colours a tinted, dim light brings close to each target colour (ours, by eye)."""

TINTS: list[tuple[float, float, float]] = [
    (1.0, 0.6, 0.35),
    (1.0, 0.75, 0.5),
    (0.45, 0.6, 1.0),
    (0.6, 0.8, 1.0),
]
"""Warm and cool light colours."""


class IlluminationVariabilityFamily(CountingFamily):
    """Illumination Variability."""

    family = "Enumerative Perception"
    subcategory = "Illumination Variability"
    slug = "illumination_variability"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        shape = pick(rng, SHAPES)
        color = pick(rng, list(CONFUSABLE))
        n = int(rng.integers(2, 7))
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        centre = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        eye_xy = centre - fwd * 0.85
        scene = CountScene(shape, color)
        for b in range(2):
            bxy = centre + side * (b - 0.5) * 0.34 + fwd * float(rng.uniform(-0.1, 0.05))
            col = pick(rng, ["white", "gray", "black"])
            board = make_board(
                f"{col}_board_{b}", col, (float(bxy[0]), float(bxy[1])), (0.02, 0.17, 0.15), heading
            )
            scene.objects.append(board)
            scene.placed.append(((float(bxy[0]), float(bxy[1])), 0.1))
            if b == 0 or rng.integers(2):
                ray = bxy - eye_xy
                txy = bxy + ray / np.linalg.norm(ray) * float(rng.uniform(0.07, 0.1))
                scene.add_target(rng, (float(txy[0]), float(txy[1])), 0.055)
        region = (-0.6, 0.6, -0.42, 0.42)
        while len(scene.targets) < n:
            (xy,) = scatter(rng, [0.04], placed=scene.placed, gap=0.05, region=region)
            scene.add_target(rng, xy, 0.055)
        for i in range(int(rng.integers(3, 6))):
            col = pick(rng, CONFUSABLE[color])
            (xy,) = scatter(rng, [0.04], placed=scene.placed, gap=0.05, region=region)
            scene.placed.append((xy, 0.04))
            scene.objects.append(
                make_object(
                    shape,
                    col,
                    xy,
                    float(rng.uniform(0.045, 0.055)),
                    name=f"{col}_{shape}_d{i}",
                    role="distractor",
                )
            )
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.03), heading + 180, float(rng.uniform(8, 13)), 0.85
        )
        tint = TINTS[int(rng.integers(len(TINTS)))]
        low = unit(heading + float(rng.choice([-90.0, 90.0])) + float(rng.uniform(-30, 30)))
        changed = LightSpec(
            direction=(r6(low[0]), r6(low[1]), r6(float(rng.uniform(0.25, 0.5)))),
            color=tint,
            ambient=r6(float(rng.uniform(0.2, 0.3))),
            diffuse=r6(float(rng.uniform(0.35, 0.5))),
        )
        draft = scene.draft(
            camera,
            "on the table? The reference image shows your first view under normal light; the "
            "light has since changed.",
            "The light is now dim and tinted, so colours shift: objects of a neighbouring colour "
            "can pass for the asked one. Use the reference image to learn how the asked colour "
            "looks next to its neighbours, look behind the boards, and count each object once. "
            "There is at least one.",
        )
        spec = draft.scene.model_copy(
            update={"light": changed, "reference_light": LightSpec(), "reference_cameras": [camera]}
        )
        return draft.model_copy(update={"scene": spec})
