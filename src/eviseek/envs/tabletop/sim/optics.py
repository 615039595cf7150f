"""Mirrors and glass on top of TinyRenderer, by rendering extra passes and compositing them.

Pure numpy: the functions here take rendered buffers and geometry, never the simulator.

**Planar mirrors.** A mirror is a box whose local +x face reflects, inside a frame of
:data:`MIRROR_FRAME` metres. Seen from in front, a camera at ``e`` looking along ``d`` sees, at a
mirror pixel, what a camera at the mirrored eye ``M(e)`` sees along ``M(d)``. Mirroring flips the
image's handedness, so that second camera (same intrinsics, pose mirrored, no roll since mirrors
stand upright) renders the picture flipped left to right: pixel ``(u, v)`` of the real camera is
pixel ``(W - 1 - u, v)`` of the mirrored one. That is exact for a symmetric frustum, so a mirror
costs one more render pass and a copy. Bodies behind the mirror plane (and the mirror itself)
are hidden in that pass, since the mirrored camera stands behind the mirror.

**Glass.** A glass body is drawn in the first pass like any other; a second pass with the glass
hidden shows what lies behind it; at the glass's pixels the two are blended with the glass's
opacity (:data:`GLASS_ALPHA`). One layer of glass is modelled (the near and far walls of a jar
count once). Where an object lies behind the glass, segmentation and depth at those pixels are
the object's, because an object behind clear glass is visible; where only the table, floor or
sky lies behind, they are the glass's.
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.envs.tabletop import camera as cam
from eviseek.types import Pose

MIRROR_FRAME = 0.012
"""Width in metres of the non-reflecting frame around a mirror's face."""
MIRROR_TINT = 0.1
"""Share of the mirror's own colour in what it shows (a real mirror is not perfectly clear)."""
GLASS_ALPHA = 0.22
"""Opacity of glass: the share of the glass's own shaded colour in a pixel that shows it."""


class MirrorPlane:
    """The reflecting face of a mirror box: its centre, unit normal and in-plane half sizes."""

    def __init__(
        self, position: tuple[float, ...], orientation: tuple[float, ...], size: tuple[float, ...]
    ) -> None:
        # Mirrors only ever turn about z, so the yaw fully describes the orientation.
        yaw = 2 * math.atan2(orientation[2], orientation[3])
        self.normal = np.array([math.cos(yaw), math.sin(yaw), 0.0])
        self.across = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
        self.centre = np.asarray(position, dtype=float) + self.normal * size[0] / 2
        self.half_width = size[1] / 2 - MIRROR_FRAME
        self.half_height = size[2] / 2 - MIRROR_FRAME

    def side(self, point: np.ndarray) -> np.ndarray:
        """Signed distance of points in front of the face (positive in front)."""
        return (np.asarray(point, dtype=float) - self.centre) @ self.normal

    def reflect_point(self, point: np.ndarray) -> np.ndarray:
        """The mirror image of a point."""
        pt = np.asarray(point, dtype=float)
        return pt - 2 * np.outer(self.side(pt), self.normal).reshape(pt.shape)

    def reflect_pose(self, pose: Pose) -> Pose:
        """The camera that sees, flipped left to right, what ``pose`` sees in this mirror."""
        eye = self.reflect_point(cam.position(pose))
        fwd, _, _ = cam.view_vectors(pose)
        f = fwd - 2 * (fwd @ self.normal) * self.normal
        yaw = math.degrees(math.atan2(f[1], f[0]))
        return Pose(x=float(eye[0]), y=float(eye[1]), z=float(eye[2]), yaw=yaw, pitch=pose.pitch)

    def face_mask(self, points: np.ndarray, tolerance: float | np.ndarray) -> np.ndarray:
        """Which world points (``(..., 3)``) lie on the reflecting part of the face."""
        rel = points - self.centre
        on_plane = np.abs(rel @ self.normal) <= tolerance
        inside = (np.abs(rel @ self.across) <= self.half_width) & (np.abs(rel[..., 2]) <= self.half_height)
        return on_plane & inside


def pixel_points(pose: Pose, fov: float, depth: np.ndarray) -> np.ndarray:
    """World points seen at every pixel, from metric depth along the view axis (``(h, w, 3)``)."""
    h, w = depth.shape
    fwd, right, up = cam.view_vectors(pose)
    f = (h / 2.0) / math.tan(math.radians(fov) / 2.0)
    us = (np.arange(w) + 0.5 - w / 2.0) / f
    vs = (np.arange(h) + 0.5 - h / 2.0) / f
    rays = (
        fwd[None, None, :] + us[None, :, None] * right[None, None, :] - vs[:, None, None] * up[None, None, :]
    )
    return cam.position(pose)[None, None, :] + depth[..., None] * rays


def composite_mirror(
    rgb: np.ndarray,
    mask: np.ndarray,
    mirrored_rgb: np.ndarray,
    mirror_rgb: tuple[float, float, float],
) -> np.ndarray:
    """``rgb`` with the flipped mirrored view shown at ``mask``, slightly tinted by the mirror."""
    flipped = mirrored_rgb[:, ::-1].astype(np.float32)
    tint = np.asarray(mirror_rgb, dtype=np.float32) * 255.0
    out = rgb.copy()
    out[mask] = np.clip((1 - MIRROR_TINT) * flipped[mask] + MIRROR_TINT * tint, 0, 255).astype(np.uint8)
    return out


def composite_glass(front: np.ndarray, behind: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``behind`` with the glass pixels of ``front`` (where ``mask``) blended over it."""
    out = behind.copy()
    blend = GLASS_ALPHA * front[mask].astype(np.float32) + (1 - GLASS_ALPHA) * behind[mask].astype(np.float32)
    out[mask] = np.clip(blend, 0, 255).astype(np.uint8)
    return out
