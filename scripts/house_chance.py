"""Each agent's exact accuracy on a house run against chance on the same questions.

    python scripts/house_chance.py RUN_DIR [--only-common]

Chance for a question is one over the answers a uniform guess picks from: its options (colour,
size, room, object, use, state, boundary), 4 for counting (0-3), 2 for yes/no, 2 for a version-4
location question (the named room's two surfaces), and for a room sequence every
well-formed answer a reader of the text alone could give: the two rooms it names with one or
more of the other rooms between them, in any order (64 sequences in a 6-room house; the layout,
and so which of them are doorway routes, is what the question asks about); from generator
version 3 on, the share of questions any one well-formed sequence answers, given how often each
route length is asked (1 in 17: :func:`eviseek.envs.house.questions.sequence_chance`). Prints, per agent,
the exact accuracy, the mean chance over the same questions and a 95 % bootstrap interval of
accuracy minus chance (seed 20261012, resampling questions), so "above chance" can be read off
as an interval that excludes zero. With ``--only-common`` only questions every agent finished
count (a run stopped early).
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict

import numpy as np

from eviseek.envs.house.questions import sequence_chance
from eviseek.eval.judging import load_questions, run_trajectories
from eviseek.types import Question


def chance(q: Question) -> float:
    c = q.contract
    if c.kind == "sequence":
        if int(q.metadata.get("generator_version", 0)) >= 3:
            return sequence_chance(len(c.options or []))
        # Before version 3: one over every ordering of one or more other rooms between the two.
        others = max(0, len(c.options or []) - 2)
        n = sum(math.perm(others, k) for k in range(1, others + 1))
        return 1.0 / max(1, n)
    if c.kind == "integer":
        return 1.0 / 4
    if c.kind == "yes_no":
        return 0.5
    if q.metadata.get("slug") == "location" and int(q.metadata.get("generator_version", 0)) >= 4:
        # What an object stands on, in a room the question names that holds two kinds of surface
        # (its vocabulary lists every surface, but the room's name leaves two).
        return 0.5
    return 1.0 / max(1, len(c.options or []))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("run_dir")
    ap.add_argument("--only-common", action="store_true")
    ap.add_argument("--by-kind", action="store_true", help="also print each kind's count right")
    args = ap.parse_args()
    questions = load_questions(args.run_dir)
    got: dict[str, dict[str, bool]] = defaultdict(dict)
    for traj, _ in run_trajectories(args.run_dir):
        if traj.result is not None:
            got[traj.agent][traj.question_id] = bool(traj.result.correct)
    common = set.intersection(*(set(v) for v in got.values())) if got else set()
    rng = np.random.default_rng(20261012)
    print(f"{'agent':14s} {'n':>4s} {'exact %':>8s} {'chance %':>9s} {'acc - chance, 95% CI (points)':>32s}")
    for agent in sorted(got):
        qids = sorted(common if args.only_common else got[agent])
        if args.by_kind:
            for kind in sorted({questions[q].metadata.get("slug", "") for q in qids}):
                ks = [q for q in qids if questions[q].metadata.get("slug") == kind]
                right = sum(got[agent][q] for q in ks)
                p_kind = 100 * chance(questions[ks[0]])
                print(f"  {agent:12s} {kind:22s} {right}/{len(ks)} (chance {p_kind:.1f} %)")
        acc = np.array([got[agent][q] for q in qids], dtype=float)
        p = np.array([chance(questions[q]) for q in qids])
        diff = acc - p
        boots = rng.integers(0, len(diff), size=(20000, len(diff)))
        lo, hi = np.percentile(diff[boots].mean(axis=1), [2.5, 97.5])
        print(
            f"{agent:14s} {len(qids):4d} {100 * acc.mean():8.1f} {100 * p.mean():9.1f} "
            f"{100 * diff.mean():+10.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        )


if __name__ == "__main__":
    main()
