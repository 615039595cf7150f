"""Paired statistics checked against SciPy, statsmodels and a naive bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from eviseek.eval.stats import (
    bootstrap_deltas,
    holm,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_counts,
    paired_test,
    with_holm,
)


def _random_pair(rng: np.random.Generator, n: int, acc_a: float, acc_b: float, rho: float):
    """Correlated binary correctness for two systems on the same n questions."""
    shared = rng.random(n)
    own_a = rng.random(n)
    own_b = rng.random(n)
    a = np.where(rng.random(n) < rho, shared, own_a) < acc_a
    b = np.where(rng.random(n) < rho, shared, own_b) < acc_b
    return a, b


def _naive_ci(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int, confidence: float):
    """Textbook paired bootstrap: resample question indexes, recompute the difference."""
    rng = np.random.default_rng(seed)
    n = a.size
    diff = a.astype(np.int64) - b.astype(np.int64)
    deltas = np.empty(n_resamples)
    chunk = 5_000
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        deltas[start:stop] = diff[idx].sum(axis=1) * (100.0 / n)
    alpha = 1 - confidence
    return np.quantile(deltas, [alpha / 2, 1 - alpha / 2]), deltas


def test_paired_counts_match_a_hand_table() -> None:
    a = [1, 1, 0, 0, 1, 0, True, False]
    b = [1, 0, 1, 0, 0, 0, True, True]
    c = paired_counts(a, b)
    assert (c.both, c.n_plus, c.n_minus, c.neither, c.n) == (2, 2, 2, 2, 8)
    assert c.delta_pp == 0.0
    assert c.correct_a == 4 and c.correct_b == 4


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1, 0], [1], "lengths 2 and 1 differ"),
        ([], [], "empty"),
        ([1, 2], [1, 0], "found 2"),
        ([1, None], [1, 0], "found None"),
        ([0.5, 1.0], [1, 0], "Binarise"),
    ],
)
def test_paired_counts_rejects_bad_input(a, b, message) -> None:
    with pytest.raises(ValueError, match=message):
        paired_counts(a, b)


@pytest.mark.parametrize("seed", range(6))
def test_mcnemar_exact_matches_scipy_and_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n_plus = int(rng.integers(0, 400))
        n_minus = int(rng.integers(0, 400))
        ours = mcnemar_exact(n_plus, n_minus)
        sm = mcnemar(np.array([[10, n_plus], [n_minus, 10]]), exact=True).pvalue
        assert ours == pytest.approx(sm, rel=1e-9, abs=1e-300)
        if n_plus + n_minus:
            sp = binomtest(n_plus, n_plus + n_minus, 0.5, alternative="two-sided").pvalue
            assert ours == pytest.approx(sp, rel=1e-9, abs=1e-300)


def test_mcnemar_exact_edge_cases_and_paper_scale() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 1) == 1.0
    # Two-sided exact p for 0 vs 10 is 2 / 2**10.
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    # The paper's Table 9 counts (783 vs 364) are far past p < 0.001.
    tiny = mcnemar_exact(783, 364)
    assert 0.0 < tiny < 1e-30
    assert tiny == pytest.approx(binomtest(364, 1147, 0.5).pvalue, rel=1e-9)
    # Above the exact-integer limit the SciPy path must agree with the exact rule.
    big = mcnemar_exact(15_100, 14_900)
    assert big == pytest.approx(binomtest(14_900, 30_000, 0.5).pvalue, rel=1e-6)
    with pytest.raises(ValueError, match="non-negative integer"):
        mcnemar_exact(-1, 3)
    with pytest.raises(ValueError, match="non-negative integer"):
        mcnemar_exact(2.5, 3)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(1, 15))
    # Mix of tiny, moderate and tied p values, in random order.
    ps = np.concatenate([rng.random(m) ** 3, rng.random(2) * 0.05, [0.01, 0.01]])
    rng.shuffle(ps)
    expected = multipletests(ps, method="holm")[1]
    np.testing.assert_allclose(holm(ps.tolist()), expected, rtol=1e-12)


def test_holm_rejects_out_of_range_and_handles_empty() -> None:
    assert holm([]) == []
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.2, 1.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([float("nan")])


@pytest.mark.parametrize(("seed", "n", "acc_a", "acc_b"), [(1, 400, 0.55, 0.45), (2, 250, 0.3, 0.32)])
def test_bootstrap_ci_agrees_with_naive_index_resampling(
    seed: int, n: int, acc_a: float, acc_b: float
) -> None:
    rng = np.random.default_rng(seed)
    a, b = _random_pair(rng, n, acc_a, acc_b, rho=0.5)
    fast = paired_bootstrap_ci(a, b, n_resamples=40_000, seed=seed)
    (lo, hi), naive = _naive_ci(a, b, 40_000, seed + 1000, 0.95)
    assert fast.delta == pytest.approx(100.0 * (a.sum() - b.sum()) / n)
    step = 100.0 / n  # the bootstrap distribution lives on a grid of this spacing
    assert abs(fast.low - lo) <= 1.5 * step
    assert abs(fast.high - hi) <= 1.5 * step
    # Same distribution, not just the same endpoints: compare spread too.
    ours = bootstrap_deltas(paired_counts(a, b), 40_000, seed)
    assert ours.std() == pytest.approx(naive.std(), rel=0.03)
    assert ours.mean() == pytest.approx(naive.mean(), abs=0.05 * naive.std())


def test_bootstrap_variance_matches_the_closed_form() -> None:
    rng = np.random.default_rng(7)
    a, b = _random_pair(rng, 3436, 0.527, 0.456, rho=0.4)
    c = paired_counts(a, b)
    deltas = bootstrap_deltas(c, 200_000, seed=3)
    p_plus, p_minus = c.n_plus / c.n, c.n_minus / c.n
    # Var of the mean of per-question differences in {-1, 0, 1}, times 100**2.
    var = 100.0**2 * (p_plus + p_minus - (p_plus - p_minus) ** 2) / c.n
    assert deltas.var() == pytest.approx(var, rel=0.02)
    assert deltas.mean() == pytest.approx(c.delta_pp, abs=0.02)


def test_bootstrap_is_seeded_and_checks_arguments() -> None:
    rng = np.random.default_rng(0)
    a, b = _random_pair(rng, 200, 0.6, 0.5, rho=0.3)
    one = paired_bootstrap_ci(a, b, n_resamples=5_000, seed=11)
    two = paired_bootstrap_ci(a, b, n_resamples=5_000, seed=11)
    three = paired_bootstrap_ci(a, b, n_resamples=5_000, seed=12)
    assert one == two
    assert three.n_resamples == 5_000 and three.seed == 12
    c = paired_counts(a, b)
    np.testing.assert_array_equal(bootstrap_deltas(c, 500, 11), bootstrap_deltas(c, 500, 11))
    assert not np.array_equal(bootstrap_deltas(c, 500, 11), bootstrap_deltas(c, 500, 12))
    assert one.low <= one.delta <= one.high
    wider = paired_bootstrap_ci(a, b, n_resamples=5_000, seed=11, confidence=0.99)
    assert wider.low <= one.low and wider.high >= one.high
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap_ci(a, b, confidence=95)
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap_ci(a, b, n_resamples=0)


def test_identical_systems_give_a_degenerate_interval() -> None:
    a = [1, 0, 1, 1, 0]
    ci = paired_bootstrap_ci(a, a, n_resamples=1_000)
    assert (ci.delta, ci.low, ci.high, ci.n_plus, ci.n_minus) == (0.0, 0.0, 0.0, 0, 0)


def test_paired_test_and_holm_rows() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for k in range(4):
        a, b = _random_pair(rng, 300, 0.5 + 0.05 * k, 0.5, rho=0.5)
        rows.append(paired_test(f"A{k}", "B", a, b, n_resamples=2_000, seed=k))
    adjusted = with_holm(rows)
    expected = multipletests([r.p for r in rows], method="holm")[1]
    np.testing.assert_allclose([r.p_holm for r in adjusted], expected)
    for r in adjusted:
        assert r.delta == pytest.approx(r.acc_a - r.acc_b)
        assert r.p == pytest.approx(mcnemar(np.array([[0, r.n_plus], [r.n_minus, 0]]), exact=True).pvalue)
