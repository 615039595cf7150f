"""How well the reference policy reads the house's EXPRESS kinds from one good view (ours).

    python scripts/house_express_check.py --seed 6200 [-n 10] [--kinds object,attribute,...]
        [--distance 2.2] [--size 320x240]

For each question it stands the camera level, ``--distance`` metres from the question's target
toward the middle of the target's room, facing it (2 m for the TV), renders one frame and asks the
reference reader (``models/reference/house.py``) to answer from that frame alone. It prints, per
kind, how often the reading was right, how often the reader found what it needed at all (a
confident reading, not a guess), and how often a confident reading was right. This separates the
readers (size, what an object stands on, the TV, uses) from finding the object, which the agents
do by walking; it is not an agent's accuracy.
"""

from __future__ import annotations

import argparse
import math

from eviseek.envs.house import HouseEnv, HouseSpec, build_question
from eviseek.envs.house.questions import EXPRESS_KINDS
from eviseek.models.reference.house import read_ask, solve_house
from eviseek.models.reference.vision import analyse_array
from eviseek.types import Pose


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("-n", type=int, default=10, help="questions per kind")
    ap.add_argument("--kinds", default=",".join(EXPRESS_KINDS))
    ap.add_argument("--distance", type=float, default=2.2, help="metres from the target")
    ap.add_argument("--size", default="320x240", help="frame WIDTHxHEIGHT")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    env = HouseEnv(width=width, height=height)
    print(f"seed {args.seed}, {args.n} per kind, {args.distance} m, {width}x{height}")
    print(f"{'kind':<10} {'right':>7} {'read':>7} {'right when read':>16}")
    try:
        for kind in args.kinds.split(","):
            right = read = right_read = 0
            for i in range(args.n):
                q = build_question(kind, args.seed, i)
                spec = HouseSpec.from_question(q.scene)
                x, y, _ = q.metadata["target"]["position"]
                room = spec.room(q.metadata["target"]["room"])
                cx, cy = room.centre
                d = math.hypot(cx - x, cy - y) or 1.0
                stand = 2.0 if kind == "state" else args.distance
                px, py = x + (cx - x) / d * stand, y + (cy - y) / d * stand
                yaw = math.degrees(math.atan2(y - py, x - px))
                spec.start = Pose(x=px, y=py, z=spec.camera_height, yaw=yaw, pitch=0.0)
                moved = q.model_copy(update={"scene": spec.model_dump(mode="json")})
                obs, _ = env.reset(options={"question": moved})
                ask = read_ask(q.text, list(q.contract.options or []))
                assert ask is not None, q.text
                verdict = solve_house(ask, [analyse_array(obs.image.array())])
                ok = verdict.answer == q.ground_truth
                right += ok
                if verdict.confidence > 0:
                    read += 1
                    right_read += ok
            when = f"{right_read}/{read}" if read else "-"
            print(f"{kind:<10} {right:>4}/{args.n:<2} {read:>4}/{args.n:<2} {when:>16}")
    finally:
        env.close()


if __name__ == "__main__":
    main()
