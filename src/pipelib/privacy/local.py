"""Local randomizers of a record's votes (reverse k-NN labeling, paper 003): randomized response on
every bit of the record's vote vector, and the Collision mechanism on its set of voted cells.  Both
run inside the party's job, record by record; only the sum of the records' randomized reports leaves
the party (post-processing of LDP outputs).  Each is pure epsilon-LDP for any two records.
"""

from __future__ import annotations

import math

import numpy as np

from . import Adjacency, Guarantee

UNIT = "one record (randomized on its own in its party's job)"


def rr_flip_probability(epsilon: float, k: int, r: int = 1) -> float:
    """Per-bit flip probability of randomized response for epsilon-LDP on a record: 1/(e^(eps/2kr)+1).

    A record's vote matrix has k*r ones; two records' matrices differ in at most 2kr bits, and each
    bit flipped with this probability costs eps/(2kr), so the whole record costs eps.
    """
    if not epsilon > 0 or k < 1:
        raise ValueError(f"need epsilon > 0 and k >= 1, got {epsilon}, {k}")
    return 1.0 / (math.exp(epsilon / (2 * k * r)) + 1.0)


def rr_release(
    bits: np.ndarray, epsilon: float, k: int, generator: np.random.Generator, chunk: int = 4096
) -> np.ndarray:
    """Flip every bit of every record's 0/1 vote vector (rows of ``bits``) independently, and return
    the column sums of the flipped vectors: what a party holding these records sends."""
    f = rr_flip_probability(epsilon, k)
    total = np.zeros(bits.shape[1], dtype=np.int64)
    for i in range(0, len(bits), chunk):
        block = bits[i : i + chunk].astype(bool)
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


def collision_release(
    item_sets: np.ndarray, domain: int, epsilon: float, generator: np.random.Generator, chunk: int = 2048
) -> np.ndarray:
    """Randomize each record's item set (rows of ``item_sets``, m items each) with its own public random
    hash table; returns the per-item hit counts the server computes from the reports (hits_i)."""
    n, m = item_sets.shape
    t, omega, _, _ = collision_params(epsilon, m)
    e = math.exp(epsilon)
    hits = np.zeros(domain, dtype=np.int64)
    for i in range(0, n, chunk):
        sets = item_sets[i : i + chunk]
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


def guarantee(name: str, epsilon: float) -> Guarantee:
    """The record of one record's locally randomized report (one labeling round)."""
    what = {
        "rr": "randomized response, flip probability 1/(e^(eps/2k)+1) per bit",
        "collision": "Collision mechanism (Wang et al. 2021)",
    }[name]
    return Guarantee(epsilon, 0.0, Adjacency.LOCAL, UNIT, f"{what}: pure epsilon-LDP", 1)
