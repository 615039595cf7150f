"""Run the tabletop honesty checks over named splits and extra seeds, and print what fails.

    python scripts/tabletop_honesty.py --split dev --split test --split paper --seed 7001 --seed 7002

Named splits are loaded from the split cache (generated on first use, images included); an extra
seed is generated like ``test`` (ESI-Bench's forms, ``--n`` questions per subcategory, no images:
the first-view check renders its own). Every check is in :mod:`eviseek.envs.tabletop.honesty`.
Exit status 1 when any non-exempt check fails.
"""

from __future__ import annotations

import argparse
import sys
import time

from eviseek.envs.tabletop import honesty
from eviseek.envs.tabletop.generate import generate_questions, load_split
from eviseek.types import Question


def check(name: str, questions: list[Question], first_view: bool) -> list[str]:
    """Every failing line of every check on one set, printed as it goes."""
    t0 = time.perf_counter()
    failures: list[str] = []
    for sub, qs in honesty.by_subcategory(questions).items():
        failures += honesty.text_failures(sub, qs)
        failures += honesty.balance_failures(sub, qs)
        if first_view and sub not in honesty.FIRST_VIEW_ANSWERABLE and len(qs) >= 4:
            line, bad = honesty.first_view_failure(sub, qs)
            print(f"  {name} {line}", flush=True)
            failures += [bad] if bad else []
    print(
        f"{name}: {len(questions)} questions, {len(failures)} failing checks "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    for f in failures:
        print(f"  FAIL {name} {f}")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", action="append", default=[], help="a named split (dev, test, paper)")
    ap.add_argument(
        "--seed", action="append", type=int, default=[], help="an extra seed, generated like test"
    )
    ap.add_argument("--n", type=int, default=16, help="questions per subcategory for an extra seed")
    ap.add_argument(
        "--only", action="append", default=[], help="limit extra seeds to these subcategory slugs"
    )
    ap.add_argument("--no-first-view", action="store_true", help="skip the (slower) pixel check")
    args = ap.parse_args()
    failures: list[str] = []
    for name in args.split:
        failures += check(name, load_split(name), not args.no_first_view)
    for seed in args.seed:
        qs = generate_questions(
            args.n, seed, esi_forms=True, render_images=False, subcategories=args.only or None
        )
        failures += check(f"seed {seed}", qs, not args.no_first_view)
    print(f"{len(failures)} failing checks in all")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
