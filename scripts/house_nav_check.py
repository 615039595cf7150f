"""Does a navigation agent walk to its evidence? Issue 38's numbers on a house run.

    python scripts/house_nav_check.py RUN_DIR [--agent eviseek-nav] [--baseline blind]
        [--kinds object,existence,attribute,location,state,knowledge,counting] [--only QUESTIONS.jsonl]

Over the run's questions of the given kinds (the object kinds by default) it prints, for the
agent:

* **target-room entry**: the share of episodes in which some true pose of the walk lay inside
  the target room's rectangle (the room ``metadata["target"]["room"]`` names);
* **d_T against the start**: mean geodesic distance to the target at the end of the walk
  (EXPRESS-Bench's d_T, :func:`eviseek.eval.express.metrics.episode_nav`) next to the mean
  shortest-path distance at the start (``metadata["shortest_path_m"]``);
* **demands closed with the evidence kept**: of the agent's demands (EviSeek's plan records), the
  share its coverage checks judged covered in an episode whose answer-time views show the
  question's evidence (visual support above 0: the object in a kept view, or for "none there"
  answers the surfaces it could stand on); also the share covered at all;
* **how the walks went**: the share of forward moves that were blocked, and the episodes that
  ended with 12 or more steps unspent (the controller stopped, or the plan ran out) without the
  target room entered;
* **accuracy against the baseline**: exact accuracy of both on the same questions, the paired
  bootstrap 95 % interval of the difference and the exact McNemar p
  (:func:`eviseek.eval.stats.paired_test`, the report's own statistics).

``--only`` counts only the questions a question file lists (for example the questions of one
sample, read from a larger run such as a full ``house:test`` rerun).

The numbers come from the saved trajectories alone; nothing is rerun.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from eviseek.envs.house.spec import HouseSpec
from eviseek.eval.express.metrics import episode_nav
from eviseek.eval.judging import load_questions, run_trajectories
from eviseek.eval.stats import paired_test
from eviseek.types import Question, Trajectory
from eviseek.types.plans import EviSeekPlan

OBJECT_KINDS = ("object", "existence", "attribute", "location", "state", "knowledge", "counting")


def entered_target(traj: Trajectory, q: Question) -> bool:
    """Whether any true pose of the episode (the start included) lies in the target room."""
    room = HouseSpec.from_question(q.scene).room(str(q.metadata["target"]["room"]))
    poses = [traj.initial_pose, *(s.true_pose for s in traj.steps)]
    return any(p is not None and room.contains(p.x, p.y) for p in poses)


def demand_counts(traj: Trajectory) -> tuple[int, int, int]:
    """(demands, covered, covered in an episode whose answer views show the evidence)."""
    plan = traj.plan
    if not isinstance(plan, EviSeekPlan):
        return 0, 0, 0
    n = len(plan.demands)
    covered = len(set(plan.covered) & {d.id for d in plan.demands})
    support = traj.result.support if traj.result is not None else None
    shown = covered if support is not None and support > 0 else 0
    return n, covered, shown


UNSPENT = 12
"""Steps left at the end that count an episode as ended early (a look round and a few moves; the
reference controller stops rather than replans with fewer left)."""


def run_budget(run_dir: str) -> int:
    """The run's step budget (``run.json``; 120, the house default, when it does not say)."""
    try:
        with open(Path(run_dir) / "run.json", encoding="utf-8") as f:
            return int(json.load(f).get("budget") or 120)
    except (OSError, ValueError, TypeError):
        return 120


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--agent", default="eviseek-nav")
    ap.add_argument("--baseline", default="blind")
    ap.add_argument("--kinds", default=",".join(OBJECT_KINDS), help="comma-separated slugs")
    ap.add_argument("--only", default=None, help="a questions .jsonl: count only the questions it lists")
    args = ap.parse_args()
    kinds = {k.strip() for k in args.kinds.split(",") if k.strip()}
    questions = load_questions(args.run_dir)
    if args.only is not None:
        try:
            with open(args.only, encoding="utf-8") as f:
                listed = {Question.model_validate_json(line).id for line in f if line.strip()}
        except (OSError, ValueError) as e:
            raise SystemExit(f"error: cannot read the question ids of --only {args.only}: {e}") from None
        questions = {k: q for k, q in questions.items() if k in listed}
    by_agent: dict[str, dict[str, Trajectory]] = defaultdict(dict)
    for traj, _ in run_trajectories(args.run_dir, [args.agent, args.baseline]):
        q = questions.get(traj.question_id)
        if traj.result is not None and q is not None and q.metadata.get("slug") in kinds:
            by_agent[traj.agent][traj.question_id] = traj
    mine = by_agent.get(args.agent, {})
    if not mine:
        raise SystemExit(
            f"error: no finished {args.agent} episodes of kinds {sorted(kinds)} in {args.run_dir}"
        )
    qids = sorted(mine)
    entered = [entered_target(mine[q], questions[q]) for q in qids]
    navs = [episode_nav(mine[q], questions[q]) for q in qids]
    d_t = [n.d_T for n in navs if n.d_T is not None]
    start = [n.shortest_m for n in navs if n.shortest_m is not None]
    counts = [demand_counts(mine[q]) for q in qids]
    n_dem = sum(c[0] for c in counts)
    n_cov = sum(c[1] for c in counts)
    n_shown = sum(c[2] for c in counts)
    print(f"{args.agent} on {len(qids)} questions of kinds {', '.join(sorted(kinds))}")
    print(f"  target-room entry: {sum(entered)} of {len(qids)} ({100 * sum(entered) / len(qids):.1f} %)")
    print(
        f"  mean d_T {statistics.mean(d_t):.2f} m (n={len(d_t)}) against mean start distance "
        f"{statistics.mean(start):.2f} m (n={len(start)})"
    )
    if n_dem:
        print(
            f"  demands covered with the evidence in a kept view: {n_shown} of {n_dem} "
            f"({100 * n_shown / n_dem:.1f} %); covered at all: {n_cov} ({100 * n_cov / n_dem:.1f} %)"
        )
    moves = [s for q in qids for s in mine[q].steps if s.action.name == "move_forward"]
    blocked = sum(1 for s in moves if not s.feedback.success)
    budget = run_budget(args.run_dir)
    early = [q for q in qids if len(mine[q].steps) <= budget - UNSPENT]
    early_out = sum(1 for q, e in zip(qids, entered, strict=True) if q in early and not e)
    if moves:
        print(f"  forward moves blocked: {blocked} of {len(moves)} ({100 * blocked / len(moves):.1f} %)")
    print(
        f"  episodes ended with {UNSPENT} or more of the {budget} steps unspent: {len(early)}, "
        f"{early_out} of them without entering the target room"
    )
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for q in qids:
        result = mine[q].result
        by_kind[str(questions[q].metadata.get("slug"))].append(bool(result and result.correct))
    print("  correct per kind: " + ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(by_kind.items())))
    base = by_agent.get(args.baseline, {})
    common = [q for q in qids if q in base]
    if common:
        a = [bool(mine[q].result and mine[q].result.correct) for q in common]
        b = [bool(base[q].result and base[q].result.correct) for q in common]
        t = paired_test(args.agent, args.baseline, a, b)
        print(
            f"  exact accuracy {t.acc_a:.1f} % vs {args.baseline} {t.acc_b:.1f} % on {t.n} common questions: "
            f"difference {t.delta:+.1f} points, paired bootstrap 95 % CI [{t.low:+.1f}, {t.high:+.1f}], "
            f"McNemar p {t.p:.3g} (+{t.n_plus}/-{t.n_minus})"
        )


if __name__ == "__main__":
    main()
