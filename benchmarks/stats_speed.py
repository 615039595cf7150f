"""Paired bootstrap speed: eviseek's multinomial bootstrap vs naive index resampling.

The paper's protocol draws 200,000 paired resamples over 3,436 questions. This script times
``eviseek.eval.stats.paired_bootstrap_ci`` on that shape and, side by side in the same process,
the textbook implementation that resamples question indexes (chunked to bound memory). It prints
both times, their ratio, and both intervals so the agreement can be read off.

    python benchmarks/stats_speed.py [--questions 3436] [--resamples 200000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from eviseek.eval.stats import paired_bootstrap_ci


def naive_ci(
    a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Resample question indexes with replacement and recompute the accuracy difference."""
    rng = np.random.default_rng(seed)
    n = a.size
    diff = a.astype(np.int8) - b.astype(np.int8)
    deltas = np.empty(n_resamples)
    chunk = 2_000
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        deltas[start:stop] = diff[idx].sum(axis=1, dtype=np.int64) * (100.0 / n)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(deltas, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3436)
    parser.add_argument("--resamples", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of the fast method (best kept)")
    parser.add_argument("--naive-repeats", type=int, default=1)
    args = parser.parse_args()

    rng = np.random.default_rng(20261012)
    n = args.questions
    # Paired correctness shaped like the paper's EviSeek vs Single-model comparison (Table 9).
    shared = rng.random(n)
    a = np.where(rng.random(n) < 0.5, shared, rng.random(n)) < 0.527
    b = np.where(rng.random(n) < 0.5, shared, rng.random(n)) < 0.456

    fast_times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        ci = paired_bootstrap_ci(a, b, n_resamples=args.resamples, seed=0)
        fast_times.append(time.perf_counter() - t0)
    naive_times = []
    for _ in range(args.naive_repeats):
        t0 = time.perf_counter()
        lo, hi = naive_ci(a, b, args.resamples, seed=0)
        naive_times.append(time.perf_counter() - t0)

    fast, naive = min(fast_times), min(naive_times)
    print(f"questions={n} resamples={args.resamples} n+={ci.n_plus} n-={ci.n_minus} delta={ci.delta:+.2f}pp")
    print(f"multinomial bootstrap (eviseek): {fast:8.3f} s  CI [{ci.low:+.2f}, {ci.high:+.2f}]  goal < 2 s")
    print(f"naive index resampling:          {naive:8.3f} s  CI [{lo:+.2f}, {hi:+.2f}]")
    print(f"speed-up (naive / eviseek):      {naive / fast:8.1f}x")


if __name__ == "__main__":
    main()
