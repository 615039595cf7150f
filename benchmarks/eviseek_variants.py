"""Paired comparison of EviSeek variants against a baseline run on the same questions (issue 17).

Usage::

    python benchmarks/eviseek_variants.py BASE_RUNS LABEL=RUNS [LABEL=RUNS ...]

RUNS is one ``eviseek eval`` run directory holding one EviSeek agent, or several separated by
commas (e.g. the same split at two ``--seed`` values); episodes pair by (position, question id),
so give every label its runs in the same order. For every variant it
prints, next to the baseline: accuracy, support-weighted accuracy C (the report's C), the
empty-board rate (episodes whose answering call logged ``empty_board``) with the accuracy on
those episodes, images per answer and tokens per episode; then the paired accuracy difference
with its bootstrap CI and exact McNemar p (eval.stats), and a paired bootstrap CI of the C
difference (per-question support x correct, resampled over questions).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eviseek.eval.stats import paired_test
from eviseek.types import Trajectory
from eviseek.types.rundir import EPISODES_DIR, TRAJECTORY_FILE, RunDir


@dataclass
class Episode:
    correct: bool
    support: float
    images: int
    tokens: int
    empty_board: bool


def load(runs: str) -> dict[str, Episode]:
    """Episodes of the comma-separated runs' one agent, keyed by (run position, question id)."""
    out: dict[str, Episode] = {}
    for k, run in enumerate(runs.split(",")):
        out.update({f"{k}:{q}": e for q, e in load_run(Path(run)).items()})
    return out


def load_run(run: Path) -> dict[str, Episode]:
    """Episodes of one run's one agent, keyed by question id."""
    out: dict[str, Episode] = {}
    for path in RunDir(run).trajectory_files():
        traj = Trajectory.model_validate_json(path.read_text())
        r = traj.result
        if r is None:
            continue
        out[traj.question_id] = Episode(
            correct=bool(r.correct),
            support=float(r.support or 0.0),
            images=r.images_in_answer,
            tokens=(r.input_tokens or 0) + (r.output_tokens or 0),
            empty_board=any(e.kind == "empty_board" for e in traj.events),
        )
    if not out:
        raise SystemExit(f"{run}: no finished episode with a {TRAJECTORY_FILE} under {EPISODES_DIR}/")
    return out


def summary(label: str, eps: list[Episode]) -> str:
    n = len(eps)
    empty = [e for e in eps if e.empty_board]
    empty_acc = f"{100 * sum(e.correct for e in empty) / len(empty):5.1f}" if empty else "    -"
    return (
        f"{label:<10} {n:>3} {100 * sum(e.correct for e in eps) / n:6.1f} "
        f"{100 * sum(e.correct * e.support for e in eps) / n:6.1f} "
        f"{len(empty):>3} ({100 * len(empty) / n:4.1f}%) {empty_acc} "
        f"{sum(e.images for e in eps) / n:6.2f} {sum(e.tokens for e in eps) / n:8.0f}"
    )


def c_delta_ci(
    a: list[Episode], b: list[Episode], seed: int = 0, n: int = 20_000
) -> tuple[float, float, float]:
    """Paired bootstrap 95% CI of C(b) - C(a), in points."""
    d = np.array([y.correct * y.support - x.correct * x.support for x, y in zip(a, b, strict=True)])
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), size=(n, len(d)))].mean(axis=1)
    return 100 * d.mean(), 100 * float(np.quantile(means, 0.025)), 100 * float(np.quantile(means, 0.975))


def main(argv: list[str]) -> int:
    if len(argv) < 2 or any("=" not in v for v in argv[1:]):
        print("usage: eviseek_variants.py BASE_RUNS LABEL=RUNS [LABEL=RUNS ...]", file=sys.stderr)
        return 2
    base = load(argv[0])
    variants = [(v.split("=", 1)[0], load(v.split("=", 1)[1])) for v in argv[1:]]
    print(
        f"{'variant':<10} {'n':>3} {'acc':>6} {'C':>6} {'empty board':>12} "
        f"{'acc':>5} {'img/ans':>6} {'tokens':>8}"
    )
    qids = sorted(base)
    print(summary("base", [base[q] for q in qids]))
    for label, eps in variants:
        missing = [q for q in qids if q not in eps]
        if missing:
            print(f"{label}: {len(missing)} question(s) missing, e.g. {missing[0]}", file=sys.stderr)
            return 1
        print(summary(label, [eps[q] for q in qids]))
    print()
    print("paired against base (accuracy: bootstrap 95% CI and exact McNemar; C: bootstrap 95% CI)")
    for label, eps in variants:
        a, b = [base[q] for q in qids], [eps[q] for q in qids]
        t = paired_test(
            label, "base", [e.correct for e in b], [e.correct for e in a]
        )  # delta: variant - base
        dc, lo, hi = c_delta_ci(a, b)
        print(
            f"{label:<10} acc {t.delta:+5.1f} [{t.low:+5.1f}, {t.high:+5.1f}] "
            f"won {t.n_plus}/lost {t.n_minus} p={t.p:.3f} | C {dc:+5.1f} [{lo:+5.1f}, {hi:+5.1f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
