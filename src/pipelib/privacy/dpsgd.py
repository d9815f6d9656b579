"""DP-SGD (Abadi et al. 2016): each step samples every record with probability q (Poisson), clips each
record's gradient to norm C and adds Gaussian noise of standard deviation z C to their sum.

The noise multiplier z for a target (epsilon, delta) over T steps, and the epsilon a run spent, come from
Opacus's RDP accountant (the accountant the DP-SGD baseline's readers know, Mironov et al. 2019's
Poisson-subsampled Gaussian); :func:`rdp_epsilon` recomputes it with dp-accounting's RDP accountant, a
second implementation that the tests hold it to.  The guarantee is add/remove one record of the pooled
private data, the unit of Poisson-sampled DP-SGD's analysis.
"""

from __future__ import annotations

import math

from . import THRESHOLD, Adjacency, Guarantee

UNIT = "one record of the pooled private data"
ACCOUNTANT = "Opacus RDP accountant (Poisson-subsampled Gaussian; Mironov, Talwar and Zhang 2019)"


def sampling(n: int, batch: int) -> tuple[float, int]:
    """(q, steps per epoch) for an expected batch of ``batch`` of ``n`` records: q = 1 / ceil(n / batch),
    the rate Opacus derives from a loader of that batch size, and 1 / q steps make an epoch."""
    if n < 1 or batch < 1:
        raise ValueError(f"DP-SGD needs records and a batch (n = {n}, batch = {batch})")
    per_epoch = math.ceil(n / batch)
    return 1.0 / per_epoch, per_epoch


def noise_multiplier(epsilon: float, delta: float, q: float, steps: int) -> float:
    """The smallest z (to Opacus's tolerance, 0.01 in epsilon) whose T = ``steps`` Poisson-sampled
    Gaussian steps at rate ``q`` are (epsilon, delta)-DP by Opacus's RDP accountant."""
    from opacus.accountants.utils import get_noise_multiplier

    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"DP-SGD needs epsilon > 0 and 0 < delta < 1 (got {epsilon}, {delta})")
    return float(get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=q, steps=steps))


def opacus_epsilon(z: float, q: float, steps: int, delta: float) -> float:
    """The epsilon Opacus's RDP accountant states for ``steps`` steps of noise multiplier ``z`` at rate ``q``."""
    from opacus.accountants import RDPAccountant

    acc = RDPAccountant()
    acc.history = [(z, q, int(steps))]
    return float(acc.get_epsilon(delta=delta))


def rdp_epsilon(z: float, q: float, steps: int, delta: float) -> float:
    """Cross-check: the same epsilon from dp-accounting's RDP accountant."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    acc = RdpAccountant()
    step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z))
    acc.compose(dp_accounting.SelfComposedDpEvent(step, int(steps)))
    return float(acc.get_epsilon(delta))


def guarantee(z: float, q: float, steps: int, delta: float) -> Guarantee:
    """The guarantee of a DP-SGD run's model: (epsilon, delta) by Opacus's accountant over its ``steps``.
    Its curve is a threshold (the stated epsilon at every delta >= ``delta``, none below): sound, and tight
    at the delta the run was calibrated for."""
    return Guarantee(
        epsilon=opacus_epsilon(z, q, steps, delta),
        delta=delta,
        adjacency=Adjacency.ADD_REMOVE_ONE,
        unit=UNIT,
        accountant=ACCOUNTANT,
        releases=int(steps),
        curve=THRESHOLD,
    )
