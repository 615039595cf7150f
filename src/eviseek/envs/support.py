"""Decisive evidence and exact visual support, shared by the simulated environments (tabletop and
house both grade with it; it lives here so neither stands on the other).

A task family declares, per question, a list of *pieces* of decisive evidence. The grade of a set
of frames is 1 when every piece is shown by some frame of the set, 0.5 when some piece is, 0 when
none is (the paper's delta in {0, 0.5, 1}, computed from simulator buffers instead of a judge).

Pieces:

- :class:`ViewEvidence`: in ONE frame, every listed object is visible with at least
  ``min_fraction`` of its unoccluded pixel area (and at least ``min_pixels`` pixels), optionally
  with the camera looking down steeply (``max_pitch``), from a direction that makes an angle in
  ``[min_angle, max_angle]`` with an ``axis``, or with the objects at similar depths.
- :class:`OutcomeEvidence`: a frame taken AFTER a successful physical action of a given name (on
  given objects), showing the listed objects as a :class:`ViewEvidence` would.
- :class:`AnyOf`: the piece is shown when any alternative is.

The unoccluded pixel area of an object in a frame is measured by rendering that object alone, at
its pose at the time of the frame, from the same camera (the tabletop's
:class:`~eviseek.envs.tabletop.sim.ProbeSim`; the house its own).
Objects cut by the image border therefore count by their in-frame part; ``min_pixels`` keeps a
sliver at the border or a speck in the distance from counting.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, Field

from eviseek.envs import view as cam
from eviseek.types import Pose

DEFAULT_MIN_FRACTION = 0.5
DEFAULT_MIN_PIXELS = 60
"""At 320x240; scaled by image area for other resolutions."""


class ViewEvidence(BaseModel):
    """Objects seen together in one frame, optionally from a constrained viewpoint."""

    kind: Literal["view"] = "view"
    objects: list[str]
    min_fraction: float = DEFAULT_MIN_FRACTION
    min_pixels: int = DEFAULT_MIN_PIXELS
    max_pitch: float | None = None
    """Camera pitch must be at most this (e.g. -50: a steep, top-down-ish view)."""
    axis: tuple[float, float, float] | None = None
    """With ``min_angle``/``max_angle``: the (undirected) angle between the viewing ray from the
    camera to the objects' centroid and this axis must lie in the range."""
    min_angle: float = 0.0
    max_angle: float = 90.0
    max_depth_ratio: float | None = None
    """The farthest object's depth divided by the nearest's must not exceed this."""
    label: str = ""
    """What this piece shows, in words (for reports and docs)."""


class OutcomeEvidence(BaseModel):
    """The result of a physical test, seen in a frame taken after the test."""

    kind: Literal["outcome"] = "outcome"
    action: str
    """Name of the action whose outcome matters (``put_on``, ``put_inside``, ``pour``...)."""
    args: dict[str, str] = Field(default_factory=dict)
    """Arguments the action must have had (a subset match); empty matches any."""
    require_success: bool | None = None
    """``True``/``False`` to require that outcome; ``None`` accepts either (a failure is evidence too)."""
    show: list[str] = Field(default_factory=list)
    """Objects the later frame must show (like :class:`ViewEvidence` with no viewpoint constraint)."""
    min_fraction: float = DEFAULT_MIN_FRACTION
    min_pixels: int = DEFAULT_MIN_PIXELS
    label: str = ""


class AnyOf(BaseModel):
    """A piece of evidence that several alternative observations can provide."""

    kind: Literal["any_of"] = "any_of"
    options: list[ViewEvidence | OutcomeEvidence]
    label: str = ""


Evidence = Annotated[ViewEvidence | OutcomeEvidence | AnyOf, Field(discriminator="kind")]


@dataclass
class ActionEvent:
    """A physical action the episode executed, and the first frame that could show its outcome."""

    name: str
    args: dict[str, str]
    success: bool
    frame_after: int


@dataclass
class FrameInfo:
    """What the grader knows about one frame."""

    frame_id: int
    pose: Pose
    segmentation: np.ndarray
    object_poses: dict[str, tuple[tuple[float, ...], tuple[float, ...]]]
    object_uids: dict[str, int]
    visible_cache: dict[str, tuple[int, int]] = field(default_factory=dict)
    """name -> (visible pixels, unoccluded pixels)."""


AloneFn = Callable[[str, tuple[float, ...], tuple[float, ...], Pose], int]


class SupportGrader:
    """Grades frame sets against declared evidence. Holds privileged buffers; for scoring only."""

    def __init__(
        self, evidence: list[Evidence], *, alone: AloneFn, fov: float, width: int, height: int
    ) -> None:
        self.evidence = list(evidence)
        self._alone = alone
        self.fov = fov
        self.width = width
        self.height = height
        self.frames: dict[int, FrameInfo] = {}
        self.events: list[ActionEvent] = []
        self._pixel_scale = (width * height) / (320 * 240)

    # -- recording -------------------------------------------------------------------

    def add_frame(self, info: FrameInfo) -> None:
        """Record a frame (called by the environment after every render)."""
        self.frames[info.frame_id] = info

    def add_event(self, event: ActionEvent) -> None:
        """Record a physical action."""
        self.events.append(event)

    # -- measurement -----------------------------------------------------------------

    def visibility(self, frame_id: int, name: str) -> tuple[int, int]:
        """(visible pixels, unoccluded pixels) of object ``name`` in frame ``frame_id``."""
        info = self.frames[frame_id]
        if name not in info.visible_cache:
            uid = info.object_uids[name]
            visible = int(np.count_nonzero(info.segmentation == uid))
            pos, orn = info.object_poses[name]
            alone = self._alone(name, pos, orn, info.pose) if visible or pos[2] > -10 else 0
            # Rasterisation can differ by a pixel or two at silhouettes; never report more than all.
            info.visible_cache[name] = (visible, max(alone, visible))
        return info.visible_cache[name]

    def visible_fraction(self, frame_id: int, name: str) -> float:
        """Visible share of the object's unoccluded area in the frame (0 when out of view)."""
        visible, alone = self.visibility(frame_id, name)
        return 0.0 if alone == 0 else visible / alone

    def _shows(self, frame_id: int, names: list[str], min_fraction: float, min_pixels: int) -> bool:
        need = max(1, round(min_pixels * self._pixel_scale))
        for n in names:
            visible, alone = self.visibility(frame_id, n)
            if alone == 0 or visible < need or visible / alone < min_fraction:
                return False
        return True

    def _centre(self, info: FrameInfo, names: list[str]) -> np.ndarray:
        return np.mean([np.asarray(info.object_poses[n][0]) for n in names], axis=0)

    def _view_ok(self, ev: ViewEvidence, frame_id: int) -> bool:
        info = self.frames[frame_id]
        if ev.max_pitch is not None and info.pose.pitch > ev.max_pitch + 1e-6:
            return False
        if ev.axis is not None:
            ray = self._centre(info, ev.objects) - cam.position(info.pose)
            axis = np.asarray(ev.axis, dtype=float)
            cosang = abs(float(ray @ axis)) / (np.linalg.norm(ray) * np.linalg.norm(axis) + 1e-12)
            angle = math.degrees(math.acos(min(1.0, float(cosang))))
            if not ev.min_angle - 1e-6 <= angle <= ev.max_angle + 1e-6:
                return False
        if ev.max_depth_ratio is not None:
            pts = np.array([info.object_poses[n][0] for n in ev.objects])
            _, depth = cam.project(pts, info.pose, self.fov, self.width, self.height)
            if np.any(depth <= 0) or depth.max() / depth.min() > ev.max_depth_ratio:
                return False
        return self._shows(frame_id, ev.objects, ev.min_fraction, ev.min_pixels)

    def _outcome_ok(self, ev: OutcomeEvidence, frame_id: int) -> bool:
        for event in self.events:
            if event.name != ev.action or event.frame_after > frame_id:
                continue
            if any(event.args.get(k) != v for k, v in ev.args.items()):
                continue
            if ev.require_success is not None and event.success != ev.require_success:
                continue
            if self._shows(frame_id, ev.show, ev.min_fraction, ev.min_pixels):
                return True
        return False

    def piece_shown(self, piece: Evidence, frame_ids: list[int]) -> bool:
        """Whether some frame in ``frame_ids`` shows ``piece``."""
        if isinstance(piece, AnyOf):
            return any(self.piece_shown(opt, frame_ids) for opt in piece.options)
        for fid in frame_ids:
            if fid not in self.frames:
                continue
            if isinstance(piece, ViewEvidence) and self._view_ok(piece, fid):
                return True
            if isinstance(piece, OutcomeEvidence) and self._outcome_ok(piece, fid):
                return True
        return False

    def grade(self, frame_ids: list[int]) -> float:
        """1.0 when every piece is shown, 0.5 when some are, 0.0 when none (or no evidence)."""
        if not self.evidence:
            return 0.0
        shown = sum(self.piece_shown(p, frame_ids) for p in self.evidence)
        if shown == len(self.evidence):
            return 1.0
        return 0.5 if shown else 0.0

    def report(self, frame_ids: list[int]) -> list[dict[str, object]]:
        """Per piece: its label and whether the frames show it (for reports and debugging)."""
        return [
            {"piece": i, "kind": p.kind, "label": p.label, "shown": self.piece_shown(p, frame_ids)}
            for i, p in enumerate(self.evidence)
        ]
