"""Privacy accountants.

NFDP (paper 002): a party that trains only on a random subsample of k of its n private records
is (epsilon, delta)-DP with respect to its records, whatever it releases afterwards
(post-processing), so the guarantee does not grow with queries or rounds.

* Theorem 1, sampling without replacement: (ln((n+1)/(n+1-k)), k/n).
* Theorem 2, sampling with replacement:    (k ln((n+1)/n), 1 - ((n-1)/n)^k).

Natural logarithms, as the theorems state.  The paper's printed Table 2 uses log10 for epsilon;
``epsilon_log10`` reproduces that convention for comparison only.  Adjacency is add/remove-one
record (the proofs' D' = D u {u}).  Values are computed with log1p/expm1 so that tiny k/n keeps
full precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WITH_REPLACEMENT = "with_replacement"
WITHOUT_REPLACEMENT = "without_replacement"
SAMPLINGS = (WITH_REPLACEMENT, WITHOUT_REPLACEMENT)
THEOREM = {WITHOUT_REPLACEMENT: "paper 002 Theorem 1", WITH_REPLACEMENT: "paper 002 Theorem 2"}


@dataclass(frozen=True)
class Guarantee:
    """An (epsilon, delta)-DP guarantee."""

    epsilon: float
    delta: float


def _check(n: int, k: int, sampling: str) -> None:
    if sampling not in SAMPLINGS:
        raise ValueError(f"unknown sampling {sampling!r}; allowed: {', '.join(SAMPLINGS)}")
    if int(n) != n or n < 1:
        raise ValueError(f"n (the party's private set size) must be a positive integer, got {n!r}")
    if int(k) != k or k < 0:
        raise ValueError(f"k (the subsample size) must be a non-negative integer, got {k!r}")
    if sampling == WITHOUT_REPLACEMENT and k > n:
        raise ValueError(f"sampling without replacement needs k <= n, got k={k} > n={n}")


def nfdp(n: int, k: int, sampling: str) -> Guarantee:
    """The (epsilon, delta) of NFDP for a party with n records that trains on a k-subsample."""
    _check(n, k, sampling)
    if k == 0:
        return Guarantee(0.0, 0.0)
    if sampling == WITHOUT_REPLACEMENT:  # Theorem 1
        return Guarantee(-math.log1p(-k / (n + 1)), k / n)
    # Theorem 2; for n == 1 the only record is always drawn: delta = 1.
    delta = 1.0 if n == 1 else -math.expm1(k * math.log1p(-1.0 / n))
    return Guarantee(k * math.log1p(1.0 / n), delta)


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


def delta_vacuous(delta: float, n: int) -> bool:
    """True when delta >= 1/n: a mechanism that publishes one random record outright meets
    (0, 1/n)-DP, so such a delta protects nobody.  NFDP's delta is the chance that a given record
    is in the sample, which is >= 1/n for every k >= 1: every NFDP row with k >= 1 is flagged."""
    return bool(delta >= (1.0 / n) * (1 - 1e-12))


def nfdp_ledger_row(party: int, n: int, k: int, sampling: str) -> dict:
    """One privacy-ledger row for a party: n, k, epsilon, delta, the log10 epsilon, vacuity flag."""
    g = nfdp(n, k, sampling)
    return {
        "party": int(party),
        "n": int(n),
        "k": int(k),
        "sampling": sampling,
        "epsilon": g.epsilon,
        "delta": g.delta,
        "epsilon_log10": g.epsilon / math.log(10.0),
        "delta_vacuous": delta_vacuous(g.delta, n),
        "accountant": THEOREM[sampling],
    }


# ------------------------------------------------------------------ Gaussian answers (FedMD-LDP)
# A party releases `count` answer vectors over the whole run, each with Gaussian noise of standard
# deviation sigma on every coordinate.  Each answer is a probability vector (softmax or one-hot), so
# changing one private record (which may change the trained model arbitrarily) moves an answer by at
# most sqrt(2) in L2: the sensitivity.  The releases compose adaptively; Google's dp-accounting RDP
# accountant (add/remove-one adjacency) turns the composition into (epsilon, delta).

PROBABILITY_SENSITIVITY = math.sqrt(2.0)


def _gaussian_event(noise_multiplier: float, count: int):
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), int(count))


def gaussian_epsilon(sigma: float, count: int, delta: float, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """epsilon spent by ``count`` Gaussian releases with noise ``sigma`` at ``delta`` (RDP accountant)."""
    from dp_accounting.rdp import RdpAccountant

    if sigma <= 0 or count < 1 or not 0 < delta < 1:
        raise ValueError(f"need sigma > 0, count >= 1, 0 < delta < 1; got {sigma}, {count}, {delta}")
    acc = RdpAccountant()
    acc.compose(_gaussian_event(sigma / sensitivity, count))
    return float(acc.get_epsilon(delta))


def gaussian_sigma(epsilon: float, delta: float, count: int, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """Smallest noise sigma (to 0.1 %) such that ``count`` Gaussian releases meet (epsilon, delta)."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    if not (epsilon > 0 and 0 < delta < 1 and count >= 1):
        raise ValueError(f"need epsilon > 0, 0 < delta < 1, count >= 1; got {epsilon}, {delta}, {count}")
    z = dp_accounting.calibrate_dp_mechanism(
        RdpAccountant, lambda z: _gaussian_event(z, count), epsilon, delta,
        bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-6, 1.0), tol=1e-3)
    # calibrate_dp_mechanism returns the upper end of its final bracket: it meets the target.
    return float(z) * sensitivity
