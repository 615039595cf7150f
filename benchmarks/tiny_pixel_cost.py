"""What one TinyRenderer frame costs per shaded pixel, and whether triangles or faces change it.

    python benchmarks/tiny_pixel_cost.py [--size 512x512] [--repeat 7]

One wall (4 m x 2.5 m) stands 2 m in front of a level camera with a 90 degree view, covering most
of the frame. It is drawn, alone, as a PyBullet box (12 triangles, the house's walls), as a mesh
of only its front face in 2 triangles, the same face turned away (TinyRenderer skips back faces:
nothing is drawn), and as meshes of that face cut into 8 to 512 triangles. For each: CPU time of
the render over an empty frame (median of ``--repeat``), the share of the frame it covers, the
cost per covered pixel, and whether its pixels equal the box's. The process is pinned to one core.
If every variant that draws costs about the same, the cost is the shading of covered pixels, and
no change of triangles or bodies can lower it (issue 38's question about the house at 512x512).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import numpy as np

from eviseek._lazy import require_pybullet
from eviseek.envs import view
from eviseek.types import Pose

COLOUR = [0.5, 0.6, 0.7, 1.0]
POSE = Pose(x=0.0, y=0.0, z=1.5, yaw=0.0, pitch=0.0)


def grid_face(n: int, *, flip: bool = False) -> dict[str, Any]:
    """The wall's front face (the plane x = 0, facing -x) as an ``n`` x ``n`` grid of quads."""
    verts, uvs, idx = [], [], []
    for i in range(n + 1):
        for j in range(n + 1):
            verts.append([0.0, -2.0 + 4.0 * j / n, -1.25 + 2.5 * i / n])
            uvs.append([j / n, i / n])
    for i in range(n):
        for j in range(n):
            a = i * (n + 1) + j
            b, c, d = a + 1, a + n + 1, a + n + 2
            idx += [a, b, c, b, d, c] if flip else [a, c, b, b, c, d]
    return {"vertices": verts, "indices": idx, "uvs": uvs, "normals": [[-1.0, 0.0, 0.0]] * len(verts)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="512x512", help="frame WIDTHxHEIGHT")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    p = require_pybullet("this benchmark")
    c = p.connect(p.DIRECT)

    def render() -> tuple[float, np.ndarray]:
        times = []
        for _ in range(args.repeat):
            t = time.process_time()
            out = p.getCameraImage(
                width,
                height,
                viewMatrix=view.view_matrix(POSE),
                projectionMatrix=view.projection_matrix(90.0, width, height, far=30.0),
                renderer=p.ER_TINY_RENDERER,
                shadow=0,
                physicsClientId=c,
            )
            times.append(time.process_time() - t)
        rgb = np.asarray(out[2], dtype=np.uint8).reshape(height, width, 4)[:, :, :3]
        return statistics.median(times), rgb

    empty, blank = render()
    variants: list[tuple[str, int]] = []
    box = p.createVisualShape(p.GEOM_BOX, halfExtents=[0.025, 2.0, 1.25], rgbaColor=COLOUR, physicsClientId=c)
    variants.append(
        ("box (12 triangles)", p.createMultiBody(0, -1, box, [2.025, 0.0, 1.25], physicsClientId=c))
    )
    for n, flip in ((1, True), (1, False), (2, False), (4, False), (8, False), (16, False)):
        shape = p.createVisualShape(
            p.GEOM_MESH, rgbaColor=COLOUR, physicsClientId=c, **grid_face(n, flip=flip)
        )
        label = f"face, {2 * n * n} triangles" + (", turned away" if flip else "")
        variants.append((label, p.createMultiBody(0, -1, shape, [2.0, 0.0, 1.25], physicsClientId=c)))
    for _, uid in variants:  # park them all; each is brought in front of the camera alone
        p.resetBasePositionAndOrientation(uid, [2.0, 0.0, -50.0], [0, 0, 0, 1], physicsClientId=c)
    head = f"TinyRenderer, {width}x{height}, one core, median of {args.repeat}"
    print(f"{head}; empty frame {1000 * empty:.1f} ms CPU")
    print(f"{'drawn as':<32} {'ms over empty':>13} {'covered':>8} {'ns/pixel':>9} {'same pixels as box':>19}")
    reference: np.ndarray | None = None
    for label, uid in variants:
        p.resetBasePositionAndOrientation(
            uid, [2.0 if "box" not in label else 2.025, 0.0, 1.25], [0, 0, 0, 1], physicsClientId=c
        )
        cost, rgb = render()
        p.resetBasePositionAndOrientation(uid, [2.0, 0.0, -50.0], [0, 0, 0, 1], physicsClientId=c)
        covered = float((rgb != blank).any(axis=2).mean())
        if reference is None:
            reference = rgb
        same = "yes" if np.array_equal(rgb, reference) else "no"
        per = 1e9 * (cost - empty) / (covered * width * height) if covered else float("nan")
        print(f"{label:<32} {1000 * (cost - empty):>13.1f} {100 * covered:>7.0f}% {per:>9.0f} {same:>19}")
    p.disconnect(c)


if __name__ == "__main__":
    main()
