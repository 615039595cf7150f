"""How often the reference policy's doorway reading is right, against the house specs.

    python scripts/house_doorway_check.py QUESTIONS.jsonl [--first 40] [--size 320x240]

For each of the first questions it renders the 12 views of a full turn at the start pose and
compares the doorways the policy reads from each view (two room floors that meet,
:attr:`eviseek.models.reference.house.HouseView.links`) with the house's true doorways
(``HouseSpec.doors``). It also counts, on the same floor labels, the rule used before issue 38
(any other room's floor in view from inside a room means a doorway between the two), so the two
can be compared. Prints every false doorway and the totals.
"""

from __future__ import annotations

import argparse

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.spec import HouseSpec
from eviseek.models.reference import house
from eviseek.models.reference.vision import analyse
from eviseek.types import Action
from eviseek.types.question_file import read_questions_by_id


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("questions")
    ap.add_argument("--first", type=int, default=40)
    ap.add_argument("--size", default="320x240", help="WIDTHxHEIGHT of the rendered frames")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    questions = read_questions_by_id(args.questions)
    env = HouseEnv(width=width, height=height)
    true_new = false_new = true_old = false_old = 0
    try:
        for qid, q in list(questions.items())[: args.first]:
            doors = {frozenset(d.rooms) for d in HouseSpec.from_question(q.scene).doors}
            obs, _ = env.reset(options={"question": q})
            for k in range(12):
                s = house.read_view(analyse(obs.image))
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


if __name__ == "__main__":
    main()
