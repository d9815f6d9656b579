"""Gaussian answers (FedMD-LDP): a party releases ``count`` answer vectors over a run, each with
Gaussian noise of standard deviation sigma on every coordinate.

Each answer is a probability vector (softmax or one-hot), so changing one private record (which may
change the trained model arbitrarily) moves an answer by at most sqrt(2) in L2: the sensitivity.
The releases compose adaptively; Google's dp-accounting RDP accountant turns the composition into
(epsilon, delta).
"""

from __future__ import annotations

import math

from . import Adjacency, Guarantee

PROBABILITY_SENSITIVITY = math.sqrt(2.0)
UNIT = "one record of the party's private data"


def _event(noise_multiplier: float, count: int):
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), int(count))


def gaussian_epsilon(sigma: float, count: int, delta: float, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """epsilon spent by ``count`` Gaussian releases with noise ``sigma`` at ``delta`` (RDP accountant)."""
    from dp_accounting.rdp import RdpAccountant

    if sigma <= 0 or count < 1 or not 0 < delta < 1:
        raise ValueError(f"need sigma > 0, count >= 1, 0 < delta < 1; got {sigma}, {count}, {delta}")
    acc = RdpAccountant()
    acc.compose(_event(sigma / sensitivity, count))
    return float(acc.get_epsilon(delta))


def gaussian_sigma(epsilon: float, delta: float, count: int, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """Smallest noise sigma (to 0.1 %) such that ``count`` Gaussian releases meet (epsilon, delta)."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    if not (epsilon > 0 and 0 < delta < 1 and count >= 1):
        raise ValueError(f"need epsilon > 0, 0 < delta < 1, count >= 1; got {epsilon}, {delta}, {count}")
    z = dp_accounting.calibrate_dp_mechanism(
        RdpAccountant,
        lambda z: _event(z, count),
        epsilon,
        delta,
        bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-6, 1.0),
        tol=1e-3,
    )
    # calibrate_dp_mechanism returns the upper end of its final bracket: it meets the target.
    return float(z) * sensitivity


def guarantee(sigma: float, count: int, delta: float, sensitivity: float = PROBABILITY_SENSITIVITY) -> Guarantee:
    """The record of a party's ``count`` Gaussian answers with noise ``sigma``, at ``delta``."""
    eps = gaussian_epsilon(sigma, count, delta, sensitivity)
    return Guarantee(
        eps,
        delta,
        Adjacency.ADD_REMOVE_ONE,
        UNIT,
        f"dp-accounting RDP, {count} Gaussian releases, L2 sensitivity {sensitivity:.4g}",
        count,
    )
