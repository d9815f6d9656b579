"""Uncertainty of a measured accuracy: the 95 % interval every reproduction table prints beside it.

An accuracy measured on n test records is a binomial proportion; its interval here is Wilson's score
interval (good coverage also near 0 and 1 and for small n, unlike the normal approximation).  It covers
the sampling of the test set only, not the run-to-run spread of training (seeds), which needs repeats.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _stats


def wilson(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``successes / n`` (SciPy's ``binomtest(...).proportion_ci``;
    ``successes`` is rounded to the nearest count)."""
    if n <= 0:
        raise ValueError(f"an interval needs at least one trial, got n = {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n = {n}], got {successes}")
    ci = _stats.binomtest(round(successes), n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def accuracy_interval(accuracy: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The interval of an accuracy measured on ``n`` test records (NaN, NaN for a missing accuracy)."""
    if accuracy is None or math.isnan(accuracy):
        return math.nan, math.nan
    return wilson(round(accuracy * n), n, confidence)


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two intervals overlap: a difference between them is then inconclusive."""
    return a[0] <= b[1] and b[0] <= a[1]


def against_interval(value: float, low: float, high: float, digits: int = 4) -> str:
    """Where ``value`` (a paper's printed accuracy) lies against an interval [low, high]: "inside [l, h]", or
    "X points above/below [l, h]" (X in accuracy points, from the nearer end)."""
    interval = f"[{low:.{digits}f}, {high:.{digits}f}]"
    if low <= value <= high:
        return f"inside {interval}"
    side, edge = ("above", high) if value > high else ("below", low)
    return f"{100 * abs(value - edge):.{max(digits - 2, 1)}f} points {side} {interval}"


def mean_accuracy_interval(accuracies, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The interval of a mean over parties of accuracies measured on the same ``n`` test records: the
    parties' spread (Student's t over the parties) and the test set's binomial sampling at the mean,
    combined in quadrature.  One party: the binomial interval alone."""
    a = np.asarray(accuracies, dtype=np.float64)
    if a.size == 0 or n <= 0:
        raise ValueError(f"an interval needs at least one party and one test record, got {a.size} and {n}")
    return summary_accuracy_interval(float(a.mean()), float(a.std(ddof=0)), a.size, n, confidence)


def summary_accuracy_interval(mean: float, std: float, parties: int, n: int, confidence: float = 0.95):
    """:func:`mean_accuracy_interval` from a result row's summary: the parties' ``mean`` accuracy, their
    standard deviation ``std`` (population, ddof 0, as FedMD's rows state it) and their number."""
    if parties <= 1:
        return accuracy_interval(mean, n, confidence)
    t = float(_stats.t.ppf(0.5 + confidence / 2, parties - 1))
    z = float(_stats.norm.ppf(0.5 + confidence / 2))
    sample_std = std * math.sqrt(parties / (parties - 1))
    half = math.hypot(t * sample_std / math.sqrt(parties), z * math.sqrt(mean * (1 - mean) / n))
    return max(0.0, mean - half), min(1.0, mean + half)


def paired_difference_interval(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of the mean difference ``a - b`` of paired measurements (the same parties, samples
    and seeds under two settings): Student's t over the per-pair differences.  The test records are shared, so
    their sampling is not in it: the interval is about these parties on this test set."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if d.size < 2:
        raise ValueError(f"a paired interval needs at least two pairs, got {d.size}")
    t = float(_stats.t.ppf(0.5 + confidence / 2, d.size - 1))
    half = t * float(d.std(ddof=1)) / math.sqrt(d.size)
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def repeated_accuracy_interval(runs, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The interval of a row's accuracy, the mean over repeated runs (seeds) of each run's mean over its
    parties, all on ``n`` test records.  One run: :func:`mean_accuracy_interval` over its parties.  Several:
    Student's t over the runs' means (the parties' spread shows in them, since each run deals, samples and
    trains anew) and the test set's binomial sampling at the mean, combined in quadrature."""
    means = np.array([np.mean(np.asarray(r, dtype=np.float64)) for r in runs])
    if means.size == 1:
        return mean_accuracy_interval(runs[0], n, confidence)
    return mean_accuracy_interval(means, n, confidence)


def with_accuracy_interval(rows, n_column: str, digits: int | None = None):
    """A DataFrame ``rows`` with ``accuracy_low`` and ``accuracy_high``: each ``accuracy``'s Wilson interval
    over its ``n_column`` test records (rounded to ``digits`` when given)."""
    bounds = [
        accuracy_interval(a, int(n)) if n == n else (math.nan, math.nan)
        for a, n in zip(rows["accuracy"], rows[n_column])
    ]
    low, high = [b[0] for b in bounds], [b[1] for b in bounds]
    if digits is not None:
        low, high = [round(x, digits) for x in low], [round(x, digits) for x in high]
    return rows.assign(accuracy_low=low, accuracy_high=high)
