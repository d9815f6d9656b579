"""The 95 % interval of an accuracy: Wilson's score interval, against closed values and by simulation."""

import math

import numpy as np
import pytest

from pipelib import stats


def test_wilson_matches_published_values():
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662 (Wilson, 95 %)
    low, high = stats.wilson(81, 263)
    assert (low, high) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    # 0 of 10: the upper end is z^2 / (n + z^2)
    assert stats.wilson(0, 10) == pytest.approx((0.0, 1.96**2 / (10 + 1.96**2)), abs=1e-4)


def test_wilson_covers_about_95_percent_by_simulation():
    rng = np.random.default_rng(0)
    for p, n in ((0.5, 1000), (0.97, 1000), (0.1, 200)):
        hits = rng.binomial(n, p, size=4000)
        covered = np.mean([lo <= p <= hi for lo, hi in (stats.wilson(h, n) for h in hits)])
        assert 0.93 <= covered <= 0.97, (p, n, covered)


def test_accuracy_interval_and_overlap():
    lo, hi = stats.accuracy_interval(0.9685, 10000)
    assert lo < 0.9685 < hi and hi - lo == pytest.approx(2 * 1.96 * (0.9685 * 0.0315 / 10000) ** 0.5, rel=0.02)
    assert stats.overlap((0.1, 0.2), (0.19, 0.3)) and not stats.overlap((0.1, 0.2), (0.21, 0.3))
    with pytest.raises(ValueError, match="at least one trial"):
        stats.wilson(0, 0)
    assert all(math.isnan(x) for x in stats.accuracy_interval(float("nan"), 100))  # missing, not a crash


def test_mean_accuracy_interval_combines_the_parties_and_the_test_set():
    accs, n = [0.6, 0.7, 0.8], 1000
    low, high = stats.mean_accuracy_interval(accs, n)
    t = 4.302653  # Student's t, 2 degrees of freedom, 97.5 %
    half = math.hypot(t * 0.1 / math.sqrt(3), 1.959964 * math.sqrt(0.7 * 0.3 / n))
    assert (low, high) == pytest.approx((0.7 - half, 0.7 + half), abs=1e-5)
    assert stats.mean_accuracy_interval([0.9], 200) == stats.accuracy_interval(0.9, 200)  # one party: Wilson
    assert stats.mean_accuracy_interval([0.5] * 10, 10**9) == pytest.approx((0.5, 0.5), abs=1e-4)
    with pytest.raises(ValueError, match="at least one party"):
        stats.mean_accuracy_interval([], 100)


def test_mean_accuracy_interval_covers_the_parties_mean_by_simulation():
    """Ten parties whose true accuracies spread around mu, each scored on 600 test records: the interval
    covers mu in at least 95 % of the draws (it is conservative: the parties' spread already holds part
    of the test-set noise)."""
    rng = np.random.default_rng(1)
    mu, n, covered = 0.7, 600, []
    for _ in range(3000):
        p = np.clip(rng.normal(mu, 0.05, 10), 0, 1)
        low, high = stats.mean_accuracy_interval(rng.binomial(n, p) / n, n)
        covered.append(low <= mu <= high)
    assert 0.95 <= np.mean(covered) < 0.999, np.mean(covered)


def test_repeated_accuracy_interval_is_over_the_runs_means():
    """Several seeds: Student's t over the runs' means (each a mean over its parties) and the test set's
    binomial at the grand mean, in quadrature; one seed: the interval over its parties."""
    runs, n = [[0.5, 0.7], [0.7, 0.9], [0.6, 0.8]], 1000  # means 0.6, 0.8, 0.7
    half = math.hypot(4.302653 * 0.1 / math.sqrt(3), 1.959964 * math.sqrt(0.7 * 0.3 / n))
    assert stats.repeated_accuracy_interval(runs, n) == pytest.approx((0.7 - half, 0.7 + half), abs=1e-5)
    assert stats.repeated_accuracy_interval([[0.5, 0.7, 0.9]], n) == stats.mean_accuracy_interval([0.5, 0.7, 0.9], n)


def test_the_interval_from_a_rows_summary_is_the_interval_from_its_parties():
    """A result row states its parties' mean, population std and count: the same interval as from the parties."""
    accs = np.array([0.61, 0.7, 0.66, 0.58, 0.72])
    summary = stats.summary_accuracy_interval(accs.mean(), accs.std(ddof=0), accs.size, 900)
    assert summary == pytest.approx(stats.mean_accuracy_interval(accs, 900), abs=1e-12)
    assert stats.summary_accuracy_interval(0.7, 0.0, 1, 900) == stats.accuracy_interval(0.7, 900)


def test_against_interval_says_inside_or_how_far_from_the_nearer_end():
    from pipelib.stats import against_interval

    assert against_interval(0.5, 0.4, 0.6) == "inside [0.4000, 0.6000]"
    assert against_interval(0.806, 0.593, 0.690, digits=3) == "11.6 points above [0.593, 0.690]"
    assert against_interval(0.3, 0.4, 0.6) == "10.00 points below [0.4000, 0.6000]"
