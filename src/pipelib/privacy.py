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

import numpy as np

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


# ------------------------------------------------------------- reverse k-NN labeling (paper 003)
# A private record with label y votes for its k nearest queries: its contribution to the count
# matrix A (queries x classes) is a 0/1 matrix with k*r ones (r = 1 label).  Neighbouring datasets
# differ by *replacing* one record (bounded adjacency, as the paper's sensitivity 2kr assumes):
# k*r ones move, so A changes by at most 2kr in L1.  Under add/remove-one it would be k*r.

def laplace_scale(epsilon: float, k: int, r: int = 1) -> float:
    """Laplace scale for central epsilon-DP on the summed vote counts: sensitivity 2kr / epsilon."""
    if not epsilon > 0 or k < 1:
        raise ValueError(f"need epsilon > 0 and k >= 1, got {epsilon}, {k}")
    return 2.0 * k * r / epsilon


def laplace_counts(counts: np.ndarray, epsilon: float, k: int, generator: np.random.Generator) -> np.ndarray:
    """The central mechanism: Laplace(2k/epsilon) noise on every cell of the summed counts."""
    return counts + generator.laplace(0.0, laplace_scale(epsilon, k), size=counts.shape)


def rr_flip_probability(epsilon: float, k: int, r: int = 1) -> float:
    """Per-bit flip probability of randomized response for epsilon-LDP on a record: 1/(e^(eps/2kr)+1).

    A record's vote matrix has k*r ones; two records' matrices differ in at most 2kr bits, and each
    bit flipped with this probability costs eps/(2kr), so the whole record costs eps.
    """
    if not epsilon > 0 or k < 1:
        raise ValueError(f"need epsilon > 0 and k >= 1, got {epsilon}, {k}")
    return 1.0 / (math.exp(epsilon / (2 * k * r)) + 1.0)


def rr_release(bits: np.ndarray, epsilon: float, k: int, generator: np.random.Generator,
               chunk: int = 4096) -> np.ndarray:
    """Flip every bit of every record's 0/1 vote vector (rows of ``bits``) independently, and return
    the column sums of the flipped vectors: what a party holding these records sends."""
    f = rr_flip_probability(epsilon, k)
    total = np.zeros(bits.shape[1], dtype=np.int64)
    for i in range(0, len(bits), chunk):
        block = bits[i:i + chunk].astype(bool)
        total += (block ^ (generator.random(block.shape) < f)).sum(0)
    return total


def rr_estimate(observed_ones: np.ndarray, n_records: int, epsilon: float, k: int) -> np.ndarray:
    """Unbiased count estimate from summed RR bits: (observed - n f) / (1 - 2f)."""
    f = rr_flip_probability(epsilon, k)
    return (observed_ones - n_records * f) / (1.0 - 2.0 * f)


# Collision (Wang et al., IJCAI 2021, "Hiding numerical vectors in local private and shuffled
# messages"; definition as in the authors' code wangsw/ldplearn MeanEstimation/collision.py, the
# oracle paper 003 uses for local DP).  A record is a set of at most m items of a domain of size d
# (here the k (query, label) cells it votes for, m = k).  With a public random hash H: items -> [t],
# t = floor(m e^eps + 2m - 1) and Omega = m e^eps + t - m, the record sends one z in [t]:
# P(z) = e^eps / Omega if z is the hash of one of its items, else (Omega - |C| e^eps) / ((t - |C|) Omega),
# C being the set of its items' hashes.  Every output probability lies in [1/Omega, e^eps/Omega], so
# any two records (any two item sets of size <= m) are epsilon-indistinguishable: pure epsilon-LDP.
# An item i is "hit" by a report when H(i) = z; its count estimate is (hits - n/t) / (e^eps/Omega - 1/t).

def collision_params(epsilon: float, m: int) -> tuple[int, float, float, float]:
    """(t, Omega, true-hit rate e^eps/Omega, false-hit rate 1/t) of the Collision mechanism."""
    if not epsilon > 0 or m < 1:
        raise ValueError(f"need epsilon > 0 and m >= 1, got {epsilon}, {m}")
    t = int(m * math.exp(epsilon) + 2 * m - 1)
    omega = m * math.exp(epsilon) + t - m
    return t, omega, math.exp(epsilon) / omega, 1.0 / t


def collision_output_probabilities(items: np.ndarray, hashes: np.ndarray, epsilon: float, m: int) -> np.ndarray:
    """P(z) for z in [t] for a record holding ``items`` under hash table ``hashes`` (closed form)."""
    t, omega, _, _ = collision_params(epsilon, m)
    hit = np.zeros(t, dtype=bool)
    hit[hashes[items]] = True
    c = int(hit.sum())
    return np.where(hit, math.exp(epsilon) / omega, (omega - c * math.exp(epsilon)) / ((t - c) * omega))


def collision_release(item_sets: np.ndarray, domain: int, epsilon: float, generator: np.random.Generator,
                      chunk: int = 2048) -> np.ndarray:
    """Randomize each record's item set (rows of ``item_sets``, m items each) with its own public random
    hash table; returns the per-item hit counts the server computes from the reports (hits_i)."""
    n, m = item_sets.shape
    t, omega, _, _ = collision_params(epsilon, m)
    e = math.exp(epsilon)
    hits = np.zeros(domain, dtype=np.int64)
    for i in range(0, n, chunk):
        sets = item_sets[i:i + chunk]
        b = len(sets)
        hashes = generator.integers(0, t, size=(b, domain))  # public randomness, one table per record
        own = np.take_along_axis(hashes, sets, axis=1)  # hashes of the record's items
        hit = np.zeros((b, t), dtype=bool)
        np.put_along_axis(hit, own, True, axis=1)
        c = hit.sum(1, keepdims=True)
        weights = np.where(hit, e / omega, (omega - c * e) / ((t - c) * omega))
        z = (weights.cumsum(1) > generator.random((b, 1)) * weights.sum(1, keepdims=True)).argmax(1)
        hits += (hashes == z[:, None]).sum(0)  # server side: which items each report points at
    return hits


def collision_estimate(hits: np.ndarray, n_records: int, epsilon: float, m: int) -> np.ndarray:
    """Unbiased item-count estimate from Collision hit counts."""
    _, _, true_rate, false_rate = collision_params(epsilon, m)
    return (hits - n_records * false_rate) / (true_rate - false_rate)
