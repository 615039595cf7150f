"""What mirrors, glass, cloth and lighting cost on TinyRenderer, side by side in one run, and what
a PyBullet soft-body cloth would cost instead of the drape model.

    python benchmarks/tabletop_rendering.py [--repeats 10] [--size 320x240] [--soft-body] [--png out.png]

Every row renders the same table with five objects from the same camera; each adds one feature.
The ratio column is the time per frame over the plain scene's. ``--soft-body`` also times 1 s of
simulated fall of a 25x25-vertex PyBullet soft-body cloth (reduced-deformable world) over a cube,
and reports whether its vertices stayed within a metre of where they started. ``--png`` writes the
mirror+glass+cloth frame next to the plain one, to look at.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from eviseek.envs.tabletop.families._common import make_object, orbit_pose
from eviseek.envs.tabletop.scene import LightSpec, ObjectSpec, SceneSpec, yaw_quat
from eviseek.envs.tabletop.sim import TabletopSim


def base_objects() -> list[ObjectSpec]:
    """Five catalogue objects spread over the middle of the table."""
    return [
        make_object("cube", "red", (0.0, 0.1), 0.06, mass=0.0),
        make_object("ball", "blue", (-0.1, -0.12), 0.06, mass=0.0),
        make_object("cone", "green", (0.12, -0.05), 0.06, mass=0.0),
        make_object("cylinder", "orange", (-0.15, 0.18), 0.04, mass=0.0),
        make_object("pyramid", "purple", (-0.3, -0.1), 0.07, mass=0.0),
    ]


MIRROR = ObjectSpec(
    name="mirror",
    shape="box",
    category="mirror",
    color="white",
    size=(0.02, 0.4, 0.3),
    position=(0.3, 0.0, 0.15),
    orientation=yaw_quat(180),
    mass=0.0,
    movable=False,
    material="mirror",
)
JAR = ObjectSpec(
    name="jar",
    shape="container",
    category="jar",
    color="white",
    size=(0.1, 0.1, 0.12),
    position=(-0.15, 0.18, 0.06),
    mass=0.0,
    material="glass",
)
CLOTH = ObjectSpec(
    name="cloth",
    shape="cloth",
    category="cloth",
    color="cyan",
    size=(0.2, 0.2, 0.01),
    position=(-0.3, -0.1, 0.0),
    mass=0.0,
    movable=False,
)
DIM_WARM = LightSpec(direction=(-1.0, 0.6, 0.5), color=(1.0, 0.55, 0.3), ambient=0.25, diffuse=0.8)


def scenes() -> dict[str, SceneSpec]:
    """The benchmark's scenes, plain first."""
    objs = base_objects()
    return {
        "plain": SceneSpec(objects=objs),
        "dim coloured light": SceneSpec(objects=objs, light=DIM_WARM),
        "light with shadows": SceneSpec(objects=objs, light=DIM_WARM.model_copy(update={"shadow": True})),
        "cloth": SceneSpec(objects=[*objs, CLOTH]),
        "glass jar": SceneSpec(objects=[*objs, JAR]),
        "mirror": SceneSpec(objects=[*objs, MIRROR]),
        "mirror + glass + cloth": SceneSpec(objects=[*objs, MIRROR, JAR, CLOTH]),
    }


def time_scene(spec: SceneSpec, width: int, height: int, repeats: int) -> tuple[float, float, np.ndarray]:
    """(median seconds to (re)build the world, median seconds per frame, last frame's RGB)."""
    sim = TabletopSim(spec, width=width, height=height)
    builds = []
    for _ in range(3):
        t0 = time.perf_counter()
        sim.build(spec)
        builds.append(time.perf_counter() - t0)
    build = statistics.median(builds)
    pose = orbit_pose((0.0, 0.0, 0.05), 180, 25, 0.8)
    times = []
    rgb = sim.render(pose).rgb
    for _ in range(repeats):
        t = time.perf_counter()
        rgb = sim.render(pose).rgb
        times.append(time.perf_counter() - t)
    sim.close()
    return build, statistics.median(times), rgb


def soft_body_cloth(n: int = 25, seconds: float = 1.0) -> tuple[float, bool]:
    """Seconds of CPU for ``seconds`` of a soft-body cloth falling on a cube; whether it stayed sane."""
    import pybullet as p

    side = 0.26
    lines = [
        f"v {(i / (n - 1) - 0.5) * side:.5f} {(j / (n - 1) - 0.5) * side:.5f} 0"
        for j in range(n)
        for i in range(n)
    ]
    for j in range(n - 1):
        for i in range(n - 1):
            a = j * n + i + 1
            lines += [f"f {a} {a + 1} {a + n + 1}", f"f {a} {a + n + 1} {a + n}"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cloth.obj"
        path.write_text("\n".join(lines) + "\n")
        c = p.connect(p.DIRECT)
        p.resetSimulation(p.RESET_USE_DEFORMABLE_WORLD, physicsClientId=c)
        p.setGravity(0, 0, -9.81, physicsClientId=c)
        p.setTimeStep(1 / 240, physicsClientId=c)
        box = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.8, 0.6, 0.025], physicsClientId=c)
        p.createMultiBody(0, box, -1, [0, 0, -0.025], physicsClientId=c)
        cube = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.035] * 3, physicsClientId=c)
        p.createMultiBody(0, cube, -1, [0, 0, 0.035], physicsClientId=c)
        cloth = p.loadSoftBody(
            str(path),
            basePosition=[0, 0, 0.13],
            mass=0.05,
            useMassSpring=1,
            useBendingSprings=1,
            springElasticStiffness=60,
            springDampingStiffness=0.2,
            useFaceContact=1,
            frictionCoeff=0.8,
            physicsClientId=c,
        )
        t = time.perf_counter()
        for _ in range(int(240 * seconds)):
            p.stepSimulation(physicsClientId=c)
        used = time.perf_counter() - t
        _, verts = p.getMeshData(cloth, -1, flags=p.MESH_DATA_SIMULATION_MESH, physicsClientId=c)
        p.disconnect(physicsClientId=c)
    sane = bool(np.all(np.abs(np.asarray(verts)) < 1.0))
    return used, sane


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--size", default="320x240")
    ap.add_argument("--soft-body", action="store_true")
    ap.add_argument("--png", type=Path)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    rows = {name: time_scene(spec, width, height, args.repeats) for name, spec in scenes().items()}
    plain = rows["plain"][1]
    print(f"TinyRenderer at {width}x{height}, median of {args.repeats} frames per scene")
    print(f"{'scene':<26}{'build ms':>10}{'ms/frame':>10}{'vs plain':>10}")
    for name, (build, per_frame, _) in rows.items():
        print(f"{name:<26}{build * 1000:>10.1f}{per_frame * 1000:>10.1f}{per_frame / plain:>9.2f}x")
    if args.soft_body:
        used, sane = soft_body_cloth()
        drape_build = rows["cloth"][0] - rows["plain"][0]
        print(
            f"soft-body cloth 25x25, 1 s simulated: {used:.1f} s CPU "
            f"({'stable' if sane else 'vertices blew up'}); drape model: {drape_build * 1000:.0f} ms "
            f"({used / max(drape_build, 1e-6):.0f}x faster)"
        )
    if args.png:
        from PIL import Image

        Image.fromarray(np.concatenate([rows["plain"][2], rows["mirror + glass + cloth"][2]], axis=1)).save(
            args.png
        )
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
