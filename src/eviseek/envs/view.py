"""Pinhole camera geometry shared by the PyBullet environments (tabletop and house).

Pure numpy, no simulator. Yaw is measured about +z from the +x axis; pitch is the angle of the
view direction above the horizontal (-90 looks straight down).
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.types import Pose

NEAR = 0.02
"""Default near clipping plane in metres (the tabletop's)."""
FAR = 8.0
"""Default far clipping plane in metres (the tabletop's; a house passes a larger one)."""


def wrap_yaw(yaw: float) -> float:
    """Yaw in (-180, 180], rounded so repeated turns do not accumulate float noise."""
    y = math.fmod(yaw, 360.0)
    if y <= -180.0:
        y += 360.0
    elif y > 180.0:
        y -= 360.0
    return round(y, 6) + 0.0


def view_vectors(pose: Pose) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit forward, right and up vectors of the camera (world frame)."""
    yaw, pitch = math.radians(pose.yaw), math.radians(pose.pitch)
    fwd = np.array([math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw), math.sin(pitch)])
    right = np.array([math.sin(yaw), -math.cos(yaw), 0.0])
    up = np.cross(right, fwd)
    return fwd, right, up / np.linalg.norm(up)


def position(pose: Pose) -> np.ndarray:
    """The camera position as an array."""
    return np.array([pose.x, pose.y, pose.z], dtype=float)


def view_matrix(pose: Pose) -> list[float]:
    """The OpenGL view matrix (column-major, 16 floats) PyBullet expects.

    Built from the forward/right/up vectors directly so that looking straight down (pitch -90)
    is well defined, which a fixed world "up" would not be.
    """
    fwd, right, up = view_vectors(pose)
    eye = position(pose)
    # Rows of the rotation are the camera axes in OpenGL convention (x right, y up, z backward).
    rot = np.stack([right, up, -fwd])
    trans = -rot @ eye
    mat = np.eye(4)
    mat[:3, :3] = rot
    mat[:3, 3] = trans
    return [float(v) for v in mat.T.reshape(-1)]


def projection_matrix(
    fov: float, width: int, height: int, *, near: float = NEAR, far: float = FAR
) -> list[float]:
    """The OpenGL perspective projection (column-major) for a vertical ``fov`` in degrees."""
    aspect = width / height
    f = 1.0 / math.tan(math.radians(fov) / 2.0)
    mat = np.zeros((4, 4))
    mat[0, 0] = f / aspect
    mat[1, 1] = f
    mat[2, 2] = (far + near) / (near - far)
    mat[2, 3] = 2 * far * near / (near - far)
    mat[3, 2] = -1.0
    return [float(v) for v in mat.T.reshape(-1)]


def project(
    points: np.ndarray, pose: Pose, fov: float, width: int, height: int
) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (u right, v down) and depths along the view axis of world ``points``.

    Points behind the camera get a non-positive depth; callers decide what to do with them.
    """
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    fwd, right, up = view_vectors(pose)
    rel = pts - position(pose)
    depth = rel @ fwd
    f = (height / 2.0) / math.tan(math.radians(fov) / 2.0)
    safe = np.where(np.abs(depth) < 1e-9, 1e-9, depth)
    u = width / 2.0 + f * (rel @ right) / safe
    v = height / 2.0 - f * (rel @ up) / safe
    return np.stack([u, v], axis=1), depth


def depth_to_metric(buffer: np.ndarray, *, near: float = NEAR, far: float = FAR) -> np.ndarray:
    """Convert PyBullet's non-linear depth buffer to metres along the view axis."""
    return far * near / (far - (far - near) * buffer)


def vertical_fov(horizontal_fov: float, width: int, height: int) -> float:
    """The vertical field of view (degrees) of a camera with ``horizontal_fov`` at ``width``x``height``."""
    half = math.atan(math.tan(math.radians(horizontal_fov) / 2.0) * height / width)
    return math.degrees(2.0 * half)
