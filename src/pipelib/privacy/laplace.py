"""Central Laplace noise on summed vote counts (reverse k-NN labeling, paper 003).

A private record with label y votes for its k nearest queries: its contribution to the count matrix
A (queries x classes) is a 0/1 matrix with k*r ones (r = 1 label).  Neighbouring datasets differ by
*replacing* one record (bounded adjacency, as the paper's sensitivity 2kr assumes): k*r ones move,
so A changes by at most 2kr in L1.  Under add/remove-one it would be k*r.  A trusted curator sums
the parties' counts and adds Laplace(2kr/epsilon) to every cell: pure epsilon-DP (delta = 0).
"""

from __future__ import annotations

import numpy as np

from . import Adjacency, Guarantee

UNIT = "one record of any party (the curator sees all parties' votes; n is published)"


def laplace_scale(epsilon: float, k: int, r: int = 1) -> float:
    """Laplace scale for central epsilon-DP on the summed vote counts: sensitivity 2kr / epsilon."""
    if not epsilon > 0 or k < 1:
        raise ValueError(f"need epsilon > 0 and k >= 1, got {epsilon}, {k}")
    return 2.0 * k * r / epsilon


def laplace_counts(counts: np.ndarray, epsilon: float, k: int, generator: np.random.Generator) -> np.ndarray:
    """The central mechanism: Laplace(2k/epsilon) noise on every cell of the summed counts."""
    return counts + generator.laplace(0.0, laplace_scale(epsilon, k), size=counts.shape)


def guarantee(epsilon: float, k: int) -> Guarantee:
    """The record of one noisy count matrix (one labeling round)."""
    return Guarantee(
        epsilon, 0.0, Adjacency.REPLACE_ONE, UNIT, f"Laplace mechanism, L1 sensitivity 2k = {2 * k} (paper 003)", 1
    )
