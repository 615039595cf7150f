"""How often the reference policy's doorway reading is right, against the house specs.

    python scripts/house_doorway_check.py QUESTIONS.jsonl [--first 40] [--size 512x512]

For each of the first questions it renders the 12 views of a full turn at the start pose and
compares the doorways the policy reads from each view (two room floors that meet,
:attr:`eviseek.models.reference.house.HouseView.links`) with the house's true doorways
(``HouseSpec.doors``). It also counts, on the same floor labels, the rule used before issue 38
(any other room's floor in view from inside a room means a doorway between the two), so the two
can be compared. It also places every doorway read on the ground by dead reckoning
(:func:`eviseek.models.reference.house_walk.doors_in_view`, from the agent's own frame: start at
the origin, facing +y) and measures how far each lands from the house's doorway between the same
two rooms, and whether its through-heading is square to that doorway's wall. Prints every false
doorway and the totals.
"""

from __future__ import annotations

import argparse
import math
import statistics

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.spec import HouseSpec
from eviseek.models.reference import house, house_walk
from eviseek.models.reference.vision import analyse
from eviseek.types import Action
from eviseek.types.question_file import read_questions_by_id


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("questions")
    ap.add_argument("--first", type=int, default=40)
    ap.add_argument("--size", default="512x512", help="WIDTHxHEIGHT of the rendered frames")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    questions = read_questions_by_id(args.questions)
    env = HouseEnv(width=width, height=height)
    true_new = false_new = true_old = false_old = 0
    errors: list[float] = []
    square = placed = 0
    try:
        for qid, q in list(questions.items())[: args.first]:
            spec = HouseSpec.from_question(q.scene)
            doors = {frozenset(d.rooms) for d in spec.doors}
            obs, _ = env.reset(options={"question": q})
            for k in range(12):
                view = analyse(obs.image)
                s = house.read_view(view)
                for door in house_walk.doors_in_view(view, house_walk.Pose2(0.0, 0.0, 30.0 * k)).values():
                    true = [d for d in spec.doors if frozenset(d.rooms) == door.rooms]
                    if not true:
                        continue
                    yaw = math.radians(spec.start.yaw)
                    wx = spec.start.x + math.sin(yaw) * door.x + math.cos(yaw) * door.y
                    wy = spec.start.y - math.cos(yaw) * door.x + math.sin(yaw) * door.y
                    near = min(true, key=lambda d: math.hypot(wx - d.centre[0], wy - d.centre[1]))
                    errors.append(math.hypot(wx - near.centre[0], wy - near.centre[1]))
                    heading = (spec.start.yaw + door.through) % 180
                    square += heading == (0.0 if near.axis == "y" else 90.0)
                    placed += 1
                for r in s.floor_x:
                    if s.room is not None and r != s.room:
                        if frozenset((s.room, r)) in doors:
                            true_old += 1
                        else:
                            false_old += 1
                for pair, n in s.links.items():
                    if pair in doors:
                        true_new += 1
                    else:
                        false_new += 1
                        print(f"false doorway {' / '.join(sorted(pair))} in {qid}, view {k} ({n} columns)")
                obs = env.step(Action(name="turn_left")).observation
    finally:
        env.close()
    print(f"floors that meet: {true_new} true, {false_new} false doorways")
    print(f"any two floors in view (the old rule): {true_old} true, {false_old} false doorways")
    if errors:
        p90 = sorted(errors)[int(0.9 * len(errors))]
        print(
            f"true doorways placed on the ground: {placed}; distance to the house's doorway: median "
            f"{statistics.median(errors):.2f} m, 90th percentile {p90:.2f} m, "
            f"largest {max(errors):.2f} m; through-heading square to its wall: {square} of {placed}"
        )


if __name__ == "__main__":
    main()
