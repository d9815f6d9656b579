"""DP-SGD (Abadi et al. 2016): each step samples every record with probability q (Poisson), clips each
record's gradient to norm C and adds Gaussian noise of standard deviation z C to their sum.

The guarantee is *replace one record* of the pooled private data: the run's result row and ledger publish
n, and q and the steps are computed from n, so the size is public and only a substitution is a neighbour
(docs/privacy.md).  The noise multiplier z for a target (epsilon, delta) over T steps, and the epsilon a run
spent, come from dp-accounting's privacy-loss-distribution accountant under that relation (the
Poisson-subsampled Gaussian between a record whose clipped gradient is +C and one whose is -C: Doroshenko
et al. 2022's connect-the-dots discretisation, a pessimistic, i.e. sound, estimate).  The add/remove-one
epsilon of the same run (the same accountant; the unit DP-SGD papers quote) is kept as a reference: it is
below the replace-one epsilon.  Opacus's RDP accountant (add/remove) and dp-accounting's RDP accountant are
cross-checks in the tests.
"""

from __future__ import annotations

import math

from . import THRESHOLD, Adjacency, Guarantee

UNIT = "one record of the pooled private data"
ACCOUNTANT = (
    "dp-accounting PLD accountant, replace one record (Poisson-subsampled Gaussian, connect-the-dots, "
    "discretisation 1e-3)"
)
DISCRETISATION = 1e-3  # the PLD's value discretisation: within 0.01 of 1e-4's epsilon, 5-10x faster
Z_TOLERANCE = 1e-3  # the noise multiplier's search stops when its bracket is this narrow (relative)


def sampling(n: int, batch: int) -> tuple[float, int]:
    """(q, steps per epoch) for an expected batch of ``batch`` of ``n`` records: q = 1 / ceil(n / batch),
    the rate Opacus derives from a loader of that batch size, and 1 / q steps make an epoch."""
    if n < 1 or batch < 1:
        raise ValueError(f"DP-SGD needs records and a batch (n = {n}, batch = {batch})")
    per_epoch = math.ceil(n / batch)
    return 1.0 / per_epoch, per_epoch


def pld_epsilon(z: float, q: float, steps: int, delta: float, replace: bool = True) -> float:
    """The epsilon at ``delta`` of ``steps`` Poisson-sampled Gaussian steps (noise multiplier ``z``, rate ``q``)
    by dp-accounting's PLD accountant, under replace-one adjacency (else add/remove one)."""
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    relation = dp_accounting.NeighboringRelation
    acc = PLDAccountant(
        neighboring_relation=relation.REPLACE_ONE if replace else relation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=DISCRETISATION,
    )
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), int(steps))
    return float(acc.get_epsilon(delta))


def noise_multiplier(epsilon: float, delta: float, q: float, steps: int) -> float:
    """The smallest z (to 0.1 %) whose T = ``steps`` Poisson-sampled Gaussian steps at rate ``q`` are
    (epsilon, delta)-DP under replace-one adjacency (:func:`pld_epsilon`).  Bisection from the add/remove z
    of Opacus's search, which replace-one can only raise."""
    from opacus.accountants.utils import get_noise_multiplier

    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"DP-SGD needs epsilon > 0 and 0 < delta < 1 (got {epsilon}, {delta})")
    low = float(get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=q, steps=steps)) / 2
    while pld_epsilon(low, q, steps, delta) <= epsilon:  # keep low infeasible
        low /= 2
    high = 2 * low
    while pld_epsilon(high, q, steps, delta) > epsilon:
        low, high = high, 2 * high
    while high / low > 1 + Z_TOLERANCE:
        mid = (low + high) / 2
        low, high = (low, mid) if pld_epsilon(mid, q, steps, delta) <= epsilon else (mid, high)
    return high


def opacus_epsilon(z: float, q: float, steps: int, delta: float) -> float:
    """Reference (add/remove one record): the epsilon Opacus's RDP accountant states for ``steps`` steps of
    noise multiplier ``z`` at rate ``q``."""
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
    """The guarantee of a DP-SGD run's model: (epsilon, delta) under replace-one adjacency by the PLD accountant
    over its ``steps``.  Its curve is a threshold (the stated epsilon at every delta >= ``delta``, none below):
    sound, and tight at the delta the run was calibrated for."""
    return Guarantee(
        epsilon=pld_epsilon(z, q, steps, delta),
        delta=delta,
        adjacency=Adjacency.REPLACE_ONE,
        unit=UNIT,
        accountant=ACCOUNTANT,
        releases=int(steps),
        curve=THRESHOLD,
    )
