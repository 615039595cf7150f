"""Check that hiding the bodies a camera cannot see leaves every house frame unchanged (ours).

    python scripts/house_culling_check.py [--houses 10] [--poses 40] [--size 512x512] [--seed 0]

For each house (``long_term_navigation`` questions ``seed .. seed + houses - 1``, six rooms) it
draws camera poses where the agent can stand (inside rooms, and in and beside every doorway), at
every tilt the env allows, renders each pose in two worlds of the same house, one culling
(:mod:`eviseek.envs.house.culling`) and one drawing every body, and compares the RGB, depth and
segmentation buffers byte for byte. It prints how many frames differed (the goal: none) and how
many bodies were hidden per frame; it exits 1 when any frame differed.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from eviseek.envs.house import build_question
from eviseek.envs.house.grid import blocker_at
from eviseek.envs.house.limits import checked_house
from eviseek.envs.house.sim import HouseSim
from eviseek.envs.house.spec import HouseSpec
from eviseek.types import Pose

TILTS = (-60.0, -30.0, 0.0, 30.0)


def poses_for(spec: HouseSpec, n: int, rng: np.random.Generator) -> list[Pose]:
    """``n`` standable camera poses: half anywhere in the house, half in or beside a doorway."""
    x0, y0, x1, y1 = spec.bounds
    out: list[Pose] = []
    while len(out) < n:
        if spec.doors and len(out) % 2:
            d = spec.doors[int(rng.integers(len(spec.doors)))]
            x, y = d.centre[0] + rng.uniform(-0.6, 0.6), d.centre[1] + rng.uniform(-0.6, 0.6)
        else:
            x, y = rng.uniform(x0, x1), rng.uniform(y0, y1)
        if blocker_at(spec, float(x), float(y)) is not None:
            continue
        yaw = float(rng.uniform(-180.0, 180.0))
        tilt = TILTS[int(rng.integers(len(TILTS)))]
        out.append(Pose(x=float(x), y=float(y), z=spec.camera_height, yaw=yaw, pitch=tilt))
    return out


def frame_bytes(sim: HouseSim, pose: Pose) -> bytes:
    """The three buffers of one render, as bytes."""
    f = sim.render(pose)
    return f.rgb.tobytes() + f.depth.tobytes() + f.segmentation.tobytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--houses", type=int, default=10)
    ap.add_argument("--poses", type=int, default=40, help="poses per house")
    ap.add_argument("--size", default="512x512", help="frame WIDTHxHEIGHT")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    rng = np.random.default_rng(args.seed)
    differ = frames = 0
    hidden: list[float] = []
    for k in range(args.seed, args.seed + args.houses):
        q = build_question("long_term_navigation", k, 0, n_rooms=6)
        spec = checked_house(q.scene, q.id)
        culled = HouseSim(spec, width=width, height=height)
        full = HouseSim(spec, width=width, height=height, cull=False)
        try:
            for pose in poses_for(spec, args.poses, rng):
                same = frame_bytes(culled, pose) == frame_bytes(full, pose)
                frames += 1
                hidden.append(len(culled._hidden) / len(culled.uid))
                if not same:
                    differ += 1
                    print(f"DIFFERS: {q.id} at {pose.model_dump()}")
        finally:
            culled.close()
            full.close()
    print(
        f"{frames} frames at {width}x{height} in {args.houses} houses: {differ} differed; "
        f"bodies hidden per frame: median {100 * float(np.median(hidden)):.0f}%, "
        f"min {100 * min(hidden):.0f}%, max {100 * max(hidden):.0f}%"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
