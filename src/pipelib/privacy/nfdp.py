"""NFDP (paper 002): a party that trains only on a random subsample of k of its n private records
is (epsilon, delta)-DP with respect to its records, whatever it releases afterwards
(post-processing), so the guarantee does not grow with queries or rounds.

* Theorem 1, sampling without replacement: (ln((n+1)/(n+1-k)), k/n).
* Theorem 2, sampling with replacement:    (k ln((n+1)/n), 1 - ((n-1)/n)^k).

Natural logarithms, as the theorems state.  The paper's printed Table 2 uses log10 for epsilon;
``epsilon_log10_paper_convention`` reproduces that convention for comparison only.  Values are computed
with log1p/expm1 so that tiny k/n keeps full precision.

Adjacency: the proofs compare D with D u {u} (add/remove-one).  The ledger publishes each party's n,
which add/remove-one adjacency would protect, so the record declares *replace-one* adjacency (n is
public), under which the theorems hold too: replacing one record of D changes only the outputs that
contain it, whose probability is exactly delta, so the sample is even (0, delta)-DP.  Tests check
both adjacencies by enumeration, in both directions, with n = the size of the party's dataset.

No finite epsilon holds below delta: the outputs that contain a given record have probability delta
under D and 0 under D without it, so the record's curve is a threshold at delta.

A class-stratified draw (``stratified_with_replacement``, FedMD's own code drew exactly 3 records per class)
is not one of the theorems' samplers: k is split over the classes the party holds (k // C each, one more for
k mod C classes picked at random, independently of the records), and each class is drawn with replacement
from the party's records of that class.  Its neighbours replace one record by another *of the same class*
(the party's class counts are published, as n is); the sampler of that class is then Theorem 2's on n_c
records, the other classes' draws do not change, so the party's guarantee is Theorem 2 at (n_c, k_c) for its
worst class: k_c = ceil(k / C) and the smallest n_c (:func:`stratified`).  Replacing a record by one of
another class, which the unstratified draw also covers, is not covered.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..vocab import SAMPLINGS
from . import THRESHOLD, Adjacency, Guarantee, delta_vacuous

WITH_REPLACEMENT, WITHOUT_REPLACEMENT = SAMPLINGS
STRATIFIED = "stratified_with_replacement"  # not a theorem's sampler: see the module docstring
THEOREM = {
    WITHOUT_REPLACEMENT: "paper 002 Theorem 1",
    WITH_REPLACEMENT: "paper 002 Theorem 2",
    STRATIFIED: "paper 002 Theorem 2 on the worst class (k_c = ceil(k / C) of its n_c records)",
}
UNIT = "one record of the party's private data (n is published)"
UNIT_STRATIFIED = "one record of the party's private data, replaced by one of its class (class counts are published)"


class EpsDelta(NamedTuple):
    """An (epsilon, delta) pair."""

    epsilon: float
    delta: float


def draw(n: int, k: int, sampling: str, generator: np.random.Generator) -> np.ndarray:
    """The mechanism: row positions of a size-k sample of range(n), a uniform k-subset or k uniform draws
    with replacement.  These are exactly the samplers Theorems 1 and 2 analyse (fixed size k, not Poisson).
    """
    if sampling == WITHOUT_REPLACEMENT:
        if k > n:
            raise ValueError(f"cannot draw k={k} records without replacement from n={n}")
        return generator.choice(n, size=k, replace=False)
    if sampling == WITH_REPLACEMENT:
        return generator.integers(0, n, size=k)
    raise ValueError(f"unknown sampling {sampling!r}; allowed: {', '.join(SAMPLINGS)}")


def _check(n: int, k: int, sampling: str) -> None:
    if sampling not in SAMPLINGS:
        raise ValueError(f"unknown sampling {sampling!r}; allowed: {', '.join(SAMPLINGS)}")
    if int(n) != n or n < 1:
        raise ValueError(f"n (the party's private set size) must be a positive integer, got {n!r}")
    if int(k) != k or k < 0:
        raise ValueError(f"k (the subsample size) must be a non-negative integer, got {k!r}")
    if sampling == WITHOUT_REPLACEMENT and k > n:
        raise ValueError(f"sampling without replacement needs k <= n, got k={k} > n={n}")


def nfdp(n: int, k: int, sampling: str) -> EpsDelta:
    """The (epsilon, delta) of NFDP for a party with n records that trains on a k-subsample."""
    _check(n, k, sampling)
    if k == 0:
        return EpsDelta(0.0, 0.0)
    if sampling == WITHOUT_REPLACEMENT:  # Theorem 1
        return EpsDelta(-math.log1p(-k / (n + 1)), k / n)
    # Theorem 2; for n == 1 the only record is always drawn: delta = 1.
    delta = 1.0 if n == 1 else -math.expm1(k * math.log1p(-1.0 / n))
    return EpsDelta(k * math.log1p(1.0 / n), delta)


def epsilon_log10(n: int, k: int, sampling: str) -> float:
    """Theorem 1/2's epsilon with log10 instead of ln: the convention of paper 002's printed Table 2."""
    return nfdp(n, k, sampling).epsilon / math.log(10.0)


def max_k(n: int, epsilon: float, delta: float, sampling: str) -> int:
    """Largest k whose NFDP guarantee meets the target: epsilon(k) <= epsilon and delta(k) <= delta.

    Both epsilon and delta grow with k, so the answer is the smaller of the two closed-form
    bounds, checked against the forward formulas (so float rounding can never overshoot).
    """
    _check(n, 0, sampling)
    if not (epsilon >= 0) or not (0 <= delta <= 1):
        raise ValueError(f"target needs epsilon >= 0 and 0 <= delta <= 1, got ({epsilon!r}, {delta!r})")
    if sampling == WITHOUT_REPLACEMENT:
        bound = min(n, (n + 1) * -math.expm1(-epsilon) if math.isfinite(epsilon) else n, n * delta)
    else:
        by_eps = epsilon / math.log1p(1.0 / n)
        if delta >= 1:
            by_delta = math.inf
        elif n == 1:
            by_delta = 0.0
        else:
            by_delta = math.log1p(-delta) / math.log1p(-1.0 / n)
        bound = min(by_eps, by_delta)
        if not math.isfinite(bound):
            raise ValueError("with replacement, epsilon=inf and delta=1 admit every k: no largest k")

    def meets(k: int) -> bool:
        g = nfdp(n, k, sampling)
        return g.epsilon <= epsilon and g.delta <= delta

    k = max(0, math.floor(bound))
    while k > 0 and not meets(k):
        k -= 1
    while (sampling == WITH_REPLACEMENT or k < n) and meets(k + 1):
        k += 1
    return k


def guarantee(n: int, k: int, sampling: str) -> Guarantee:
    """The record of a party's NFDP sample: Theorem 1/2 for a party of n records drawing k.

    The sample is drawn once; everything the party does afterwards is post-processing, so this one
    release covers all of its answers and rounds.  ``delta_vacuous`` is true for every k >= 1: delta is
    the chance that a given record is in the sample, which is at least 1/n."""
    g = nfdp(n, k, sampling)
    return Guarantee(g.epsilon, g.delta, Adjacency.REPLACE_ONE, UNIT, THEOREM[sampling], 1, THRESHOLD)


def ledger_extras(n: int, k: int, sampling: str) -> dict:
    """The NFDP-specific columns of a ledger row: n, k, sampling, the paper's log10 epsilon, vacuity."""
    g = nfdp(n, k, sampling)
    return {
        "n": int(n),
        "k": int(k),
        "sampling": sampling,
        "epsilon_log10_paper_convention": g.epsilon / math.log(10.0),
        "delta_vacuous": delta_vacuous(g.delta, n),
    }


# ------------------------------------------------------------------- class-stratified draws (FedMD's code)


def allocation(classes, k: int, generator: np.random.Generator) -> dict:
    """How many of k draws each class gets: k // C each of the C ``classes`` the party holds, one more for
    k mod C of them picked by ``generator`` (which never sees a record)."""
    classes = sorted(classes)
    if not classes:
        raise ValueError("a stratified draw needs at least one class")
    base, extra = divmod(int(k), len(classes))
    bonus = set(generator.permutation(len(classes))[:extra].tolist())
    return {c: base + (i in bonus) for i, c in enumerate(classes)}


def draw_stratified(labels, k: int, generator: np.random.Generator) -> np.ndarray:
    """Row positions of a class-stratified sample: each class's share (:func:`allocation`) drawn with
    replacement from that class's rows, in a shuffled order."""
    labels = np.asarray(labels)
    shares = allocation(np.unique(labels).tolist(), k, generator)
    rows = np.concatenate(
        [generator.choice(np.flatnonzero(labels == c), size=m, replace=True) for c, m in shares.items() if m]
        or [np.zeros(0, dtype=np.int64)]
    )
    return generator.permutation(rows)


def stratified(class_sizes, k: int) -> EpsDelta:
    """The (epsilon, delta) of a class-stratified draw of k records from classes of ``class_sizes`` records
    (neighbours replace one record by one of its class): Theorem 2 at the largest share, ceil(k / C), and the
    smallest class, whichever classes the allocation picks."""
    sizes = [int(n) for n in class_sizes if int(n) > 0]
    if not sizes:
        raise ValueError("a stratified draw needs at least one record")
    return nfdp(min(sizes), -(-int(k) // len(sizes)), WITH_REPLACEMENT)


def stratified_guarantee(class_sizes, k: int) -> Guarantee:
    """The record of a party's class-stratified sample (:func:`stratified`)."""
    g = stratified(class_sizes, k)
    return Guarantee(g.epsilon, g.delta, Adjacency.REPLACE_ONE, UNIT_STRATIFIED, THEOREM[STRATIFIED], 1, THRESHOLD)
