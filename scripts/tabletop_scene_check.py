"""Run the scene check (:mod:`eviseek.envs.tabletop.sim.placement`) over stored questions.

    python scripts/tabletop_scene_check.py --split dev --split test --split paper

Each question's scene is rebuilt from its record and checked as stored and, where it has scene
changes, as the episode starts. Prints the refusals (there should be none) and how many drafts
the check refused while the split was generated. Exit status 1 when any stored scene fails.
"""

from __future__ import annotations

import argparse
import sys

from eviseek.envs.tabletop.generate import load_split
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.sim import TabletopSim
from eviseek.envs.tabletop.sim.placement import placement_problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", action="append", default=[], help="a named split (dev, test, paper)")
    args = ap.parse_args()
    bad = 0
    for name in args.split:
        questions = load_split(name)
        refused_drafts = sum(int(q.metadata.get("scene_check_refused", 0)) for q in questions)
        failing = 0
        sim: TabletopSim | None = None
        try:
            for q in questions:
                spec = SceneSpec.from_question(q.scene)
                if sim is None:
                    sim = TabletopSim(spec, width=32, height=24)
                else:
                    sim.build(spec)
                problems = placement_problems(sim)
                if not problems and spec.changes:
                    for change in spec.changes:
                        sim.apply_change(change)
                    problems = placement_problems(sim)
                if problems:
                    failing += 1
                    print(f"  {q.id}: " + "; ".join(p.describe() for p in problems))
        finally:
            if sim is not None:
                sim.close()
        print(
            f"{name}: {len(questions)} questions, {failing} refused as stored; "
            f"{refused_drafts} drafts refused while generating"
        )
        bad += failing
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
