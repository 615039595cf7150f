"""Specular Reflection / Spatial Relations: which of two objects seen in a mirror is really closer?

Scene: an upright mirror (40-48 cm wide) and a camera 35-50 cm in front of it, looking at it
from 15-25 cm up. Two objects of different colours and shapes stand behind the camera, where it
cannot see them directly; both show in the mirror. The question labels them A and B (the design
says whether the closer one is A) and asks which is closer, in the real world, to "the
spot where you started" (the camera's starting position: the words do not move with the
camera). How far an object looks in the mirror is its distance from the camera's mirror image,
not from the camera, so the mirrored order can differ from the real one: the design also says
whether it does (``metadata["mirror_order_agrees"]``). Real distances differ by at least
6 cm, mirrored ones by at least 3 cm. A gray wall 50 cm behind the camera closes the scene
behind the objects.

Ground truth: the distances, in the settled simulator, from the initial camera position to the two
objects' centres.

Decisive evidence (1 piece): both objects seen directly in one frame, each with at least half of
its unoccluded pixel area (which needs turning round).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    PlacementError,
    colors,
    make_object,
    option_contract,
    pick,
    r6,
    unit,
)
from eviseek.envs.tabletop.families._mirror import (
    MirrorPlane,
    face_margin,
    make_backdrop,
    make_mirror,
    mirror_hit,
    plane_of,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import Pose

SHAPES = ["cube", "cylinder", "ball", "cone", "pyramid"]
MIN_GAP = 0.06
MAX_DRAWS = 64
"""Drafts drawn at most for one design before generation is called broken."""


class MirrorSpatialRelationsFamily(TaskFamily):
    """Spatial Relations (seen in a mirror)."""

    family = "Specular Reflection"
    subcategory = "Spatial Relations"
    slug = "mirror_spatial_relations"

    designs = ("A-agrees", "B-differs", "A-differs", "B-agrees")
    """Which label names the really closer object, and whether the mirror's order of distance
    agrees with the real one: both take turns (coins had made "A" right 8 times in 11 on
    ``paper``, and a first-view learner right 23 of 30 on ``test``)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, None)  # design_to_build draws one

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        design = self.design_to_build(rng, design)
        for _ in range(MAX_DRAWS):
            try:
                return self._draw(rng, design)
            except PlacementError:
                continue
        raise RuntimeError(f"{self.slug}: no draft of design {design!r} in {MAX_DRAWS} draws")

    def _draw(self, rng: np.random.Generator, design: str) -> TaskDraft:
        cols = colors(rng, 2)
        shapes = pick(rng, SHAPES, 2)
        # Some mirror and camera draws leave no room for the wanted case (two spots behind the
        # camera whose mirror order agrees, or disagrees, with their real order): draw the
        # geometry again rather than fail.
        want_agree = design.endswith("agrees")  # the other case is the trap the question is about
        for _ in range(50):
            facing = float(rng.uniform(0, 360))
            n, across = unit(facing), unit(facing + 90)
            face = -n * 0.3 + np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05)])
            mirror = make_mirror(
                (float(face[0]), float(face[1])), facing, float(rng.uniform(0.4, 0.48)), 0.32
            )
            plane = plane_of(mirror)
            cam_xy = face + n * float(rng.uniform(0.35, 0.5))
            eye = np.array([cam_xy[0], cam_xy[1], float(rng.uniform(0.15, 0.25))])
            placed = _place_pair(rng, PairGeometry(plane, n, across, cam_xy, eye, want_agree))
            if placed is not None:
                spots, real, agrees = placed
                break
        else:
            raise PlacementError("could not place two objects visible in the mirror in 50 geometries")
        objects = [
            make_object(
                shapes[i], cols[i], (float(spots[i][0]), float(spots[i][1])), float(rng.uniform(0.05, 0.06))
            )
            for i in range(2)
        ]
        closer = int(np.argmin(real))
        order = [closer, 1 - closer] if design.startswith("A") else [1 - closer, closer]  # order[0] is A
        a, b = objects[order[0]], objects[order[1]]
        camera = Pose(
            x=r6(eye[0]), y=r6(eye[1]), z=r6(eye[2]), yaw=r6((facing + 360) % 360 - 180), pitch=-15.0
        )
        return TaskDraft(
            design=design,
            scene=SceneSpec(
                objects=[mirror, *objects, make_backdrop(cam_xy + n * 0.5, facing + 180, 1.2)], camera=camera
            ),
            text=(
                f"In the mirror you can see two objects: object A (the {a.color} {a.category}) and "
                f"object B (the {b.color} {b.category}). In the real world, which of them is closer "
                "to the spot where you started, A or B?"
            ),
            contract=option_contract(["A", "B"], "Answer A or B."),
            guidance=(
                "Both objects are behind you and you see them only in the mirror. Distances seen in "
                "a mirror are measured from your mirror image, not from you. Turn round to see the "
                "objects themselves and compare how far each is from your starting spot. " + CAMERA_GUIDANCE
            ),
            metadata={"A": a.name, "B": b.name, "mirror": mirror.name, "mirror_order_agrees": agrees},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        eye = np.array([world.scene.camera.x, world.scene.camera.y, world.scene.camera.z])
        dist = {
            k: float(np.linalg.norm(np.asarray(world.sim.pose_of(draft.metadata[k])[0]) - eye)) for k in "AB"
        }
        return "A" if dist["A"] < dist["B"] else "B"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        pair = [metadata["A"], metadata["B"]]
        return [ViewEvidence(objects=pair, label="both objects seen directly")]


PAIR_DRAWS = 2000
"""How many pairs of spots :func:`_place_pair` draws before it gives up on a geometry."""
PAIR_BATCH = 256
"""Draws screened at once by :func:`_place_pair` (a speed setting only: any value gives the
same pairs and leaves the generator in the same state)."""
SCREEN_MARGIN = 1e-9
"""How far (in metres) past a threshold the batched screen must find a draw before it rejects
the draw without the exact check; its own rounding error is some 1e-15 m."""


@dataclass(frozen=True)
class PairGeometry:
    """What a pair of spots is drawn against: the mirror, the camera's position on the table and
    its facing (``n``) and sideways (``across``) directions, the eye, and whether the mirror's
    order of distance should agree with the real one."""

    plane: MirrorPlane
    n: np.ndarray
    across: np.ndarray
    cam_xy: np.ndarray
    eye: np.ndarray
    want_agree: bool


def _place_pair(
    rng: np.random.Generator,
    geo: PairGeometry,
) -> tuple[list[np.ndarray], list[float], bool] | None:
    """Two spots behind the camera, both seen in the mirror, whose mirror order of distance agrees
    (or not) with their real order as wanted; None when 2,000 draws find none.

    Draw ``k`` is four uniform numbers (along ``n`` and ``across`` for each spot), and
    :func:`_pair_at` decides it. Deciding draws one at a time costs some 40 small numpy calls
    each, and most draws fail, so the draws are taken a batch at a time and screened together
    (:func:`_clearly_failing`); only a draw the screen cannot rule out goes through
    :func:`_pair_at`. The screen rejects only draws that miss a test by more than
    :data:`SCREEN_MARGIN`, far more than its rounding, so the first draw :func:`_pair_at` accepts
    is the one a draw-by-draw loop accepts, and the generator is left just after it."""
    lows = np.tile([0.08, -0.26], 2 * PAIR_BATCH)
    highs = np.tile([0.4, 0.26], 2 * PAIR_BATCH)
    done = 0
    while done < PAIR_DRAWS:
        count = min(PAIR_BATCH, PAIR_DRAWS - done)
        before = rng.bit_generator.state
        # Each number is low + (high - low) * the next double, as a scalar uniform() makes it.
        u = rng.uniform(lows[: 4 * count], highs[: 4 * count]).reshape(count, 2, 2)
        failing = _clearly_failing(u, geo)
        for k in np.flatnonzero(~failing):
            placed = _pair_at(u[k], geo)
            if placed is not None:
                # Rewind, then take exactly the draws up to this one.
                rng.bit_generator.state = before
                rng.uniform(lows[: 4 * (k + 1)], highs[: 4 * (k + 1)])
                return placed
        done += count
    return None


def _pair_at(u: np.ndarray, geo: PairGeometry) -> tuple[list[np.ndarray], list[float], bool] | None:
    """The spots, real distances and agreement of one draw (``u``: along and across for each
    spot), or None if the draw fails a test."""
    spots = [geo.cam_xy + geo.n * float(u[i, 0]) + geo.across * float(u[i, 1]) for i in range(2)]
    if np.linalg.norm(spots[0] - spots[1]) < 0.1:
        return None
    centres = [np.array([s[0], s[1], 0.03]) for s in spots]
    real = [float(np.linalg.norm(c - geo.eye)) for c in centres]
    mirrored = [float(np.linalg.norm(geo.plane.reflect_point(c) - geo.eye)) for c in centres]
    agrees = (real[0] < real[1]) == (mirrored[0] < mirrored[1])
    if abs(real[0] - real[1]) < MIN_GAP or abs(mirrored[0] - mirrored[1]) < MIN_GAP / 2:
        return None
    if agrees != geo.want_agree:
        return None
    hits = [mirror_hit(geo.plane, geo.eye, c) for c in centres]
    if all(h is not None and face_margin(geo.plane, h) > 0.03 for h in hits):
        return spots, real, agrees
    return None


def _clearly_failing(u: np.ndarray, geo: PairGeometry) -> np.ndarray:
    """For each draw of ``u`` (``(k, 2, 2)``), whether it misses one of :func:`_pair_at`'s tests
    by more than :data:`SCREEN_MARGIN`: the same quantities, computed for all draws at once."""
    m = SCREEN_MARGIN
    spots = geo.cam_xy + u[..., :1] * geo.n + u[..., 1:] * geo.across  # (k, 2 spots, xy)
    centres = np.concatenate([spots, np.full((*spots.shape[:2], 1), 0.03)], axis=-1)
    separation = np.sqrt(((spots[:, 0] - spots[:, 1]) ** 2).sum(axis=-1))
    side = (centres - geo.plane.centre) @ geo.plane.normal  # (k, 2)
    images = centres - 2 * side[..., None] * geo.plane.normal
    real = np.sqrt(((centres - geo.eye) ** 2).sum(axis=-1))
    mirrored = np.sqrt(((images - geo.eye) ** 2).sum(axis=-1))
    real_gap = real[:, 0] - real[:, 1]
    mirror_gap = mirrored[:, 0] - mirrored[:, 1]
    fails = separation < 0.1 - m
    fails |= (np.abs(real_gap) < MIN_GAP - m) | (np.abs(mirror_gap) < MIN_GAP / 2 - m)
    # Both orders are certain only when neither gap is within the margin of zero.
    certain = (np.abs(real_gap) > m) & (np.abs(mirror_gap) > m)
    fails |= certain & (((real_gap < 0) == (mirror_gap < 0)) != geo.want_agree)
    # Where the eye sees each spot's image on the mirror's plane, and how far inside the face.
    eye_side = float((geo.eye - geo.plane.centre) @ geo.plane.normal)
    if eye_side <= m:
        return fails if eye_side > -m else np.ones(len(u), dtype=bool)
    fails |= (side < -m).any(axis=1)
    # Draws with a spot behind the mirror failed above; the division may blow up for them.
    with np.errstate(divide="ignore", invalid="ignore"):
        t = eye_side / (eye_side + side)
    hits = geo.eye + t[..., None] * (images - geo.eye)
    rel = hits - geo.plane.centre
    inside = np.minimum(
        geo.plane.half_width - np.abs(rel @ geo.plane.across), geo.plane.half_height - np.abs(rel[..., 2])
    )
    fails |= ((inside < 0.03 - m) & (side > m)).any(axis=1)
    return fails
