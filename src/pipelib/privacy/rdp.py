"""The Gaussian mechanism under dp-accounting's RDP accountant: ``count`` compositions of L2 sensitivity
``sensitivity`` with noise ``sigma``.  PATE's GNMax is accounted with it (:mod:`pipelib.privacy.pate`),
FedMD-LDP's answers are cross-checked with it (:mod:`pipelib.privacy.gaussian`).

Light: the distillation stage's light jobs import the mechanism registry, which imports this module;
dp-accounting (about 0.9 s of imports) is imported where an epsilon or a sigma is computed, in the
curator's job only.
"""

from __future__ import annotations

import math

PROBABILITY_SENSITIVITY = math.sqrt(2.0)


def rdp_epsilon(sigma: float, count: int, delta: float, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """Cross-check: epsilon from dp-accounting's RDP accountant (an upper bound on the exact one)."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    acc = RdpAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / sensitivity), int(count)))
    return float(acc.get_epsilon(delta))


def rdp_sigma(epsilon: float, delta: float, count: int, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """Cross-check: the sigma dp-accounting's RDP accountant would calibrate (to 0.1 %), always larger."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    z = dp_accounting.calibrate_dp_mechanism(
        RdpAccountant,
        lambda z: dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z), int(count)),
        epsilon,
        delta,
        bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-6, 1.0),
        tol=1e-3,
    )
    return float(z) * sensitivity
