"""PATE's GNMax aggregator (Papernot et al., ICLR 2018) on the owners' teachers, and its privacy.

Each owner's teacher votes for one class per query; a trusted curator adds N(0, sigma^2) to every
class's vote count and releases only the noisy argmax.  One private record changes one owner's
teacher, so at most one vote moves: two counts change by 1, an L2 sensitivity of sqrt(2) under
add/remove-one and replace-one alike.  Per query that is the Gaussian mechanism, (alpha, alpha/sigma^2)-RDP
(the data-independent bound of Papernot et al. 2018, section 4); releasing the argmax is
post-processing.  ``queries`` answers compose; epsilon at delta comes from dp-accounting's RDP
accountant (the data-dependent analysis is not in a kept library, so it is not used).
"""

from __future__ import annotations

import math

import numpy as np

from . import RDP, Adjacency, Guarantee, rdp

SENSITIVITY = math.sqrt(2.0)
UNIT = "one record of one owner's private data (through its teacher's vote)"


def gnmax_epsilon(sigma: float, queries: int, delta: float) -> float:
    """epsilon at ``delta`` of ``queries`` GNMax answers with noise ``sigma`` (RDP accountant)."""
    if not (sigma > 0 and queries >= 1 and 0 < delta < 1):
        raise ValueError(f"need sigma > 0, queries >= 1, 0 < delta < 1; got {sigma}, {queries}, {delta}")
    return rdp.rdp_epsilon(sigma, queries, delta, SENSITIVITY)


def gnmax_sigma(epsilon: float, delta: float, queries: int) -> float:
    """The sigma (to 0.1 %) with which ``queries`` GNMax answers meet (epsilon, delta) by the RDP
    accountant; the returned sigma always meets it."""
    if not (epsilon > 0 and 0 < delta < 1 and queries >= 1):
        raise ValueError(f"need epsilon > 0, 0 < delta < 1, queries >= 1; got {epsilon}, {delta}, {queries}")
    sigma = rdp.rdp_sigma(epsilon, delta, queries, SENSITIVITY)
    while gnmax_epsilon(sigma, queries, delta) > epsilon:  # never less noise than the target needs
        sigma *= 1 + 1e-4
    return sigma


def gnmax(votes: np.ndarray, sigma: float, generator: np.random.Generator) -> np.ndarray:
    """Noisy-argmax labels of vote counts (rows: queries, columns: classes)."""
    votes = np.asarray(votes, dtype=np.float64)
    return np.argmax(votes + generator.normal(0.0, sigma, size=votes.shape), axis=1)


def guarantee(sigma: float, queries: int, delta: float) -> Guarantee:
    """The curator's record for ``queries`` GNMax answers with noise ``sigma``, at ``delta``."""
    return Guarantee(
        gnmax_epsilon(sigma, queries, delta),
        delta,
        Adjacency.REPLACE_ONE,
        UNIT,
        f"RDP accountant (dp-accounting): {queries} GNMax answers, sigma {sigma:.4g}, "
        f"L2 sensitivity sqrt(2), data-independent (Papernot et al. 2018)",
        queries,
        f"{RDP}{sigma / SENSITIVITY!r} count={int(queries)}",
    )
