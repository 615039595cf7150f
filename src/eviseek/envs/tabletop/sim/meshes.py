"""Triangle meshes for the primitive shapes PyBullet has no built-in geometry for.

Each builder returns ``(vertices, indices, normals)`` centred on the shape's bounding box, with
flat-shaded faces (every triangle has its own three vertices, so normals do not blend across
edges and the renderer draws crisp facets).
"""

from __future__ import annotations

import math

import numpy as np

Mesh = tuple[list[list[float]], list[int], list[list[float]]]
"""Vertices, triangle indices and per-vertex normals."""


def cone_mesh(radius: float, height: float, n: int = 24) -> Mesh:
    """Vertices, indices and normals of a cone centred on its bounding box (flat-shaded faces)."""
    verts: list[list[float]] = []
    norms: list[list[float]] = []
    idx: list[int] = []
    h2 = height / 2.0
    slope = radius / height
    for i in range(n):
        a0, a1 = 2 * math.pi * i / n, 2 * math.pi * (i + 1) / n
        b0 = [radius * math.cos(a0), radius * math.sin(a0), -h2]
        b1 = [radius * math.cos(a1), radius * math.sin(a1), -h2]
        am = (a0 + a1) / 2
        raw = np.array([math.cos(am), math.sin(am), slope])
        nrm = [float(v) for v in raw / np.linalg.norm(raw)]
        k = len(verts)
        verts += [b0, b1, [0.0, 0.0, h2]]
        norms += [nrm, nrm, nrm]
        idx += [k, k + 1, k + 2]
        k = len(verts)
        verts += [[0.0, 0.0, -h2], b1, b0]
        norms += [[0.0, 0.0, -1.0]] * 3
        idx += [k, k + 1, k + 2]
    return verts, idx, norms


def faces_mesh(corners: list[list[float]], faces: list[list[int]]) -> Mesh:
    """Flat-shaded triangle mesh of a convex polyhedron given counter-clockwise (outward) faces."""
    verts: list[list[float]] = []
    norms: list[list[float]] = []
    idx: list[int] = []
    for face in faces:
        p = [np.asarray(corners[i], dtype=float) for i in face]
        raw = np.cross(p[1] - p[0], p[2] - p[0])
        nrm = [float(v) for v in raw / np.linalg.norm(raw)]
        for t in range(1, len(face) - 1):
            k = len(verts)
            verts += [p[0].tolist(), p[t].tolist(), p[t + 1].tolist()]
            norms += [nrm, nrm, nrm]
            idx += [k, k + 1, k + 2]
    return verts, idx, norms


def pyramid_mesh(sx: float, sy: float, sz: float) -> Mesh:
    """A four-sided pyramid with its apex above the centre of an ``sx`` by ``sy`` base."""
    x, y, z = sx / 2, sy / 2, sz / 2
    corners = [[-x, -y, -z], [x, -y, -z], [x, y, -z], [-x, y, -z], [0.0, 0.0, z]]
    faces = [[0, 3, 2, 1], [0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]]
    return faces_mesh(corners, faces)


def wedge_mesh(sx: float, sy: float, sz: float) -> Mesh:
    """A ramp: full height at local +x, zero height at -x."""
    x, y, z = sx / 2, sy / 2, sz / 2
    corners = [[-x, -y, -z], [x, -y, -z], [x, y, -z], [-x, y, -z], [x, -y, z], [x, y, z]]
    faces = [[0, 3, 2, 1], [1, 2, 5, 4], [0, 1, 4], [3, 5, 2], [0, 4, 5, 3]]
    return faces_mesh(corners, faces)
