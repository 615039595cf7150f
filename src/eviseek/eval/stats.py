"""Paired significance statistics for comparing two systems on the same questions.

Everything here works on per-question binary correctness of two systems over the same question
ids (in the same order). The paper's protocol (appendix A/G) is: accuracy difference in
percentage points, a percentile confidence interval from a paired bootstrap over question ids,
a two-sided exact McNemar test on the discordant pairs, and Holm's correction over the family of
comparisons reported together.

The bootstrap is exact in distribution yet cheap: resampling ``n`` question ids with replacement
only matters through how many of each paired outcome type (both right, only A, only B, both
wrong) the resample contains, and those four counts follow a multinomial law with the observed
proportions. Drawing the counts directly costs O(resamples) instead of O(resamples x n).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, Field

from eviseek.eval.config import PAPER_SEED

# Above this many discordant pairs the exact big-integer tail sum gets slow; SciPy's regularised
# incomplete beta is accurate to double precision there.
_EXACT_INTEGER_LIMIT = 20_000


class PairedCounts(BaseModel):
    """The 2x2 table of paired outcomes for systems A and B."""

    n: int
    """Number of paired questions."""
    both: int
    """Correct for both systems."""
    n_plus: int
    """Correct for A only."""
    n_minus: int
    """Correct for B only."""
    neither: int
    """Wrong for both."""

    @property
    def correct_a(self) -> int:
        """Questions A got right."""
        return self.both + self.n_plus

    @property
    def correct_b(self) -> int:
        """Questions B got right."""
        return self.both + self.n_minus

    @property
    def delta_pp(self) -> float:
        """Accuracy of A minus accuracy of B, in percentage points."""
        return 100.0 * (self.n_plus - self.n_minus) / self.n


class BootstrapCI(BaseModel):
    """A paired-bootstrap percentile interval for the accuracy difference A - B (pp)."""

    delta: float
    """Observed accuracy difference A - B in percentage points."""
    low: float
    high: float
    n_plus: int
    """Questions only A answered correctly."""
    n_minus: int
    """Questions only B answered correctly."""
    n: int
    confidence: float = 0.95
    n_resamples: int = 200_000
    seed: int = 0


class PairedTest(BaseModel):
    """One row of a paired-comparison table (the shape of the paper's Table 9)."""

    a: str
    """Label of system A (the difference is A - B)."""
    b: str
    delta: float
    low: float
    high: float
    n_plus: int
    n_minus: int
    n: int
    p: float
    """Two-sided exact McNemar p, uncorrected."""
    p_holm: float | None = None
    """Holm-adjusted p across the comparisons reported together."""
    acc_a: float = 0.0
    acc_b: float = 0.0
    notes: list[str] = Field(default_factory=list)


def _as_binary(values: Sequence[bool | int | float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of 0/1 or booleans, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr
    if arr.dtype == object:
        bad = [v for v in arr.tolist() if v not in (0, 1, True, False) or v is None]
        if bad:
            raise ValueError(
                f"{name} must hold only 0/1 or booleans; found {bad[0]!r}. "
                "Count a missing or failed answer as incorrect (0) before calling."
            )
        return arr.astype(bool)
    if not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must hold 0/1 or booleans, got dtype {arr.dtype}")
    ok = (arr == 0) | (arr == 1)
    if not bool(np.all(ok)):
        bad_value = arr[~ok][0].item()
        raise ValueError(
            f"{name} must hold only 0/1 or booleans; found {bad_value!r}. "
            "Binarise scores (e.g. soft counting scores) before a paired test."
        )
    return arr.astype(bool)


def paired_counts(
    correct_a: Sequence[bool | int] | np.ndarray, correct_b: Sequence[bool | int] | np.ndarray
) -> PairedCounts:
    """Count the four paired outcome types of two aligned correctness vectors."""
    a = _as_binary(correct_a, "correct_a")
    b = _as_binary(correct_b, "correct_b")
    if a.shape != b.shape:
        raise ValueError(
            f"correct_a and correct_b must be paired (same questions, same order): "
            f"lengths {a.size} and {b.size} differ"
        )
    if a.size == 0:
        raise ValueError("no paired questions: both correctness vectors are empty")
    both = int(np.count_nonzero(a & b))
    n_plus = int(np.count_nonzero(a & ~b))
    n_minus = int(np.count_nonzero(~a & b))
    return PairedCounts(
        n=int(a.size),
        both=both,
        n_plus=n_plus,
        n_minus=n_minus,
        neither=int(a.size) - both - n_plus - n_minus,
    )


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence}")


def bootstrap_deltas(counts: PairedCounts, n_resamples: int, seed: int) -> np.ndarray:
    """Bootstrap replicates of A - B (pp), drawn as multinomial outcome counts."""
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    n = counts.n
    # Only the two discordant counts move the difference; lumping the concordant ones together
    # leaves the joint law of (n_plus, n_minus) unchanged.
    pvals = np.array([counts.n_plus, counts.n_minus, n - counts.n_plus - counts.n_minus], dtype=float) / n
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, pvals, size=n_resamples)
    return (draws[:, 0] - draws[:, 1]).astype(np.float64) * (100.0 / n)


def paired_bootstrap_ci(
    correct_a: Sequence[bool | int] | np.ndarray,
    correct_b: Sequence[bool | int] | np.ndarray,
    n_resamples: int = 200_000,
    seed: int = PAPER_SEED,
    confidence: float = 0.95,
) -> BootstrapCI:
    """Percentile bootstrap CI for the paired accuracy difference A - B in percentage points.

    ``correct_a[i]`` and ``correct_b[i]`` must refer to the same question. Missing or failed
    answers must already be counted as incorrect. The result is reproducible for a given seed.
    """
    _check_confidence(confidence)
    counts = paired_counts(correct_a, correct_b)
    deltas = bootstrap_deltas(counts, n_resamples, seed)
    alpha = 1.0 - confidence
    low, high = np.quantile(deltas, [alpha / 2.0, 1.0 - alpha / 2.0])
    return BootstrapCI(
        delta=counts.delta_pp,
        low=float(low),
        high=float(high),
        n_plus=counts.n_plus,
        n_minus=counts.n_minus,
        n=counts.n,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def mcnemar_exact(n_plus: int, n_minus: int) -> float:
    """Two-sided exact McNemar p for ``n_plus`` vs ``n_minus`` discordant pairs.

    Under the null each discordant pair is equally likely to favour either system, so the
    smaller count follows Binomial(n_plus + n_minus, 1/2); the two-sided p doubles its lower
    tail (capped at 1). With no discordant pairs there is no evidence of a difference: p = 1.
    """
    for name, value in (("n_plus", n_plus), ("n_minus", n_minus)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer count, got {value!r}")
    total = int(n_plus) + int(n_minus)
    k = min(int(n_plus), int(n_minus))
    if total == 0 or 2 * k == total:
        return 1.0
    if total <= _EXACT_INTEGER_LIMIT:
        # Exact rational tail: sum of C(total, i) for i <= k over 2**total, rounded once.
        term = 1
        tail = 1
        for i in range(k):
            term = term * (total - i) // (i + 1)
            tail += term
        p = 2 * tail / (1 << total)
    else:
        from scipy.special import bdtr

        p = 2.0 * float(bdtr(k, total, 0.5))
    return float(min(1.0, p))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p values, in the order given.

    The i-th smallest p is multiplied by (m - i) (i from 0), capped at 1, and made
    non-decreasing along the sorted order, which controls the family-wise error rate.
    """
    ps = [float(p) for p in p_values]
    for p in ps:
        if math.isnan(p) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p values must lie in [0, 1], got {p}")
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[idx]))
        adjusted[idx] = running
    return adjusted


def paired_test(
    a: str,
    b: str,
    correct_a: Sequence[bool | int] | np.ndarray,
    correct_b: Sequence[bool | int] | np.ndarray,
    *,
    n_resamples: int = 200_000,
    seed: int = PAPER_SEED,
    confidence: float = 0.95,
) -> PairedTest:
    """Difference, bootstrap CI and exact McNemar p for one pair of systems (no Holm yet)."""
    ci = paired_bootstrap_ci(correct_a, correct_b, n_resamples=n_resamples, seed=seed, confidence=confidence)
    counts = paired_counts(correct_a, correct_b)
    return PairedTest(
        a=a,
        b=b,
        delta=ci.delta,
        low=ci.low,
        high=ci.high,
        n_plus=ci.n_plus,
        n_minus=ci.n_minus,
        n=ci.n,
        p=mcnemar_exact(ci.n_plus, ci.n_minus),
        acc_a=100.0 * counts.correct_a / counts.n,
        acc_b=100.0 * counts.correct_b / counts.n,
    )


def with_holm(tests: Sequence[PairedTest]) -> list[PairedTest]:
    """Copies of ``tests`` with ``p_holm`` set by Holm's correction across all of them."""
    adjusted = holm([t.p for t in tests])
    return [t.model_copy(update={"p_holm": q}) for t, q in zip(tests, adjusted, strict=True)]
