"""Does an agent that never explores beat chance on a subcategory that needs exploring?

    python scripts/tabletop_passive_check.py RUN [--agent passive]

Reads a finished run (``eviseek eval ... --agents passive``) and, per subcategory, tests the
agent's exact-match hits against the chance rate of that subcategory's questions (the same chance
and the same one-sided binomial test at the same alpha as the honesty checks,
:mod:`eviseek.envs.tabletop.honesty`). Subcategories exempt from the first-view checks
(``FIRST_VIEW_ANSWERABLE``) and from this one (``PASSIVE_ANSWERABLE``) are listed but not failed.
Exit status 1 when a subcategory that is not exempt beats chance.
"""

from __future__ import annotations

import argparse
import sys

from scipy.stats import binomtest

from eviseek.envs.tabletop import honesty
from eviseek.eval.rundir import load_run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run directory")
    ap.add_argument("--agent", default="passive", help="the agent to check (default passive)")
    args = ap.parse_args()
    run = load_run(args.run)
    results = run.results.get(args.agent)
    if not results:
        print(f"error: the run has no results of agent {args.agent!r}; it has {', '.join(run.agents)}")
        return 1
    failures = 0
    for sub, qs in honesty.by_subcategory(run.questions).items():
        done = [q for q in qs if q.id in results]
        if not done:
            continue
        hits = sum(bool(results[q.id].correct) for q in done)
        rate = sum(honesty.chance(q, done) for q in done) / len(done)
        pval = float(binomtest(hits, len(done), rate, alternative="greater").pvalue)
        exempt = sub in honesty.FIRST_VIEW_ANSWERABLE or sub in honesty.PASSIVE_ANSWERABLE
        bad = pval < honesty.ALPHA and not exempt
        failures += bad
        tag = "FAIL " if bad else ("exempt " if exempt and pval < honesty.ALPHA else "")
        print(f"{tag}{sub}: {args.agent} {hits}/{len(done)}, chance {rate * len(done):.1f} (p={pval:.4f})")
    print(f"{failures} subcategories above chance that are not exempt")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
