"""Empirical privacy auditing with one run (Steinke, Nasr and Jagielski, NeurIPS 2023).

m canaries are each included in a party's data independently with probability 1/2 (``S_i``); after one
run, an auditor that sees only the release scores every canary, guesses "in" for the ``r/2`` highest
scores and "out" for the ``r/2`` lowest (abstaining on the rest) and counts its correct guesses ``v``.
If the run is (epsilon, delta)-DP with respect to changing one canary's ``S_i``, then
P[v' >= v] <= P[Binomial(r, q) >= v] + 2 m delta alpha with q = e^eps / (1 + e^eps) and alpha the
largest mean of the binomial's mass just below v (their Theorem 5.2 / Appendix D).  The empirical
lower bound is the largest epsilon that this test rejects at the stated confidence: a claim below it
is contradicted.  Several guess counts are tried at once with a Bonferroni correction, so the
confidence holds for the best of them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """The probability of >= v correct guesses out of r (m canaries) under (epsilon, delta)-DP."""
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    q = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(stats.binom.sf(v - 1, r, q))
    if delta <= 0 or v == 0:
        return min(tail, 1.0)
    below = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[B = v-1], P[B = v-2], ..., P[B = 0]
    alpha = float(np.max(np.cumsum(below) / np.arange(1, v + 1)))
    return min(tail + alpha * delta * 2 * m, 1.0)


def epsilon_lower_bound(m: int, r: int, v: int, delta: float, alpha: float = 0.05) -> float:
    """The largest epsilon whose p-value for (m, r, v) is below ``alpha`` (0 when none is): the run is
    not (epsilon, delta)-DP for any smaller epsilon, with confidence 1 - alpha."""
    if p_value(m, r, v, 0.0, delta) >= alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while p_value(m, r, v, hi, delta) < alpha:
        lo, hi = hi, 2 * hi
        if hi > 1e3:
            return math.inf
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p_value(m, r, v, mid, delta) < alpha else (lo, mid)
    return lo


def guesses(scores: np.ndarray, r: int) -> np.ndarray:
    """+1 ("in") for the r/2 highest scores, -1 ("out") for the r/2 lowest, 0 elsewhere (ties broken by
    canary order, which is independent of who is in)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    g = np.zeros(len(order), dtype=np.int8)
    g[order[: r // 2]] = 1
    g[order[len(order) - (r - r // 2) :]] = -1
    return g


def audit(scores, included, delta: float, confidence: float = 0.95, fractions=(0.1, 0.2, 0.5, 1.0)) -> dict:
    """The one-run audit of a release: ``scores`` (higher: more likely in) and ``included`` (S_i) of the
    m canaries; ``delta``: the claim's delta.  The guess count r is each of ``fractions`` of m, with a
    Bonferroni correction over them; returns the best bound with its r and v, and the attack's AUC."""
    from sklearn.metrics import roc_auc_score

    scores, included = np.asarray(scores, dtype=np.float64), np.asarray(included, dtype=bool)
    m = len(scores)
    if m == 0 or len(included) != m:
        raise ValueError(f"need one score per canary: {m} scores, {len(included)} inclusion bits")
    alpha = (1 - confidence) / len(fractions)
    best = {"epsilon_lb": 0.0, "guesses": 0, "correct": 0}
    for f in fractions:
        r = max(2, min(m, int(round(f * m))))
        g = guesses(scores, r)
        v = int(((g == 1) & included).sum() + ((g == -1) & ~included).sum())
        eps = epsilon_lower_bound(m, r, v, delta, alpha)
        if eps > best["epsilon_lb"] or best["guesses"] == 0:
            best = {"epsilon_lb": eps, "guesses": r, "correct": v}
    auc = float(roc_auc_score(included, scores)) if 0 < included.sum() < m else float("nan")
    return {**best, "canaries": m, "included": int(included.sum()), "confidence": confidence, "auc": auc}


def randomized_response(bits: np.ndarray, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """Each bit kept with probability e^eps / (1 + e^eps), else flipped: the validation release, exactly
    epsilon-DP in each bit (``inf``: the bits themselves, a non-private release)."""
    keep = 1.0 if math.isinf(epsilon) else 1.0 / (1.0 + math.exp(-epsilon))
    bits = np.asarray(bits, dtype=bool)
    return np.where(generator.random(len(bits)) < keep, bits, ~bits)
