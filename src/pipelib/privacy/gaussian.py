"""Gaussian answers (FedMD-LDP): a party releases ``count`` answer vectors over a run, each with
Gaussian noise of standard deviation sigma on every coordinate.

Each answer is a probability vector (softmax or one-hot), so changing one private record (which may
change the trained model arbitrarily) moves an answer by at most sqrt(2) in L2: the sensitivity, under
add/remove-one and replace-one alike.  The adaptive composition of ``count`` Gaussian releases of
sensitivity s and noise sigma is exactly mu-GDP with mu = sqrt(count) s / sigma (Dong, Roth & Su
2019): the privacy of one Gaussian mechanism, whose exact (epsilon, delta) curve is
delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle & Wang 2018, the analytic Gaussian
mechanism).  :func:`gaussian_sigma` calibrates sigma on that exact curve with dp-accounting's analytic
Gaussian calibration: the sigma it returns *suffices* for the target, and is the smallest that does up to
that bisection's tolerance (about 1e-8 relative); the tests hold it to the closed form.  The RDP
accountant of dp-accounting (``rdp_epsilon``, ``rdp_sigma``, from :mod:`pipelib.privacy.rdp`) is kept as
a cross-check: it is an upper bound, and calibrating with it adds about 40 % more noise than needed here.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr

from . import GDP, Adjacency, Guarantee
from .rdp import rdp_epsilon, rdp_sigma  # noqa: F401  (the cross-checks, kept under these names)

PROBABILITY_SENSITIVITY = math.sqrt(2.0)
UNIT = "one record of the party's private data (n is published)"


def gdp_delta(epsilon: float, mu: float) -> float:
    """Exact delta(epsilon) of a mu-GDP mechanism (computed in log space: stable for large epsilon)."""
    if mu <= 0:
        return 0.0
    if math.isinf(epsilon):
        return 0.0
    la, lb = log_ndtr(-epsilon / mu + mu / 2), log_ndtr(-epsilon / mu - mu / 2)
    return float(math.exp(la) * -math.expm1(epsilon + lb - la))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon with delta(epsilon) <= ``delta`` for a mu-GDP mechanism (inf if delta <= 0)."""
    if delta >= 1:
        return 0.0
    if delta <= 0:
        return math.inf
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2
    eps = brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-14, rtol=1e-13)
    while gdp_delta(eps, mu) > delta:  # the root from above: the returned epsilon always meets delta
        eps = math.nextafter(eps, math.inf)
    return float(eps)


def composed_mu(sigma: float, count: int, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """mu of ``count`` composed Gaussian releases with L2 sensitivity ``sensitivity`` and noise ``sigma``."""
    if sigma <= 0 or count < 1:
        raise ValueError(f"need sigma > 0 and count >= 1; got {sigma}, {count}")
    return math.sqrt(count) * sensitivity / sigma


def gaussian_epsilon(sigma: float, count: int, delta: float, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """Exact epsilon spent by ``count`` Gaussian releases with noise ``sigma`` at ``delta``."""
    if not 0 < delta < 1:
        raise ValueError(f"need 0 < delta < 1; got {delta}")
    return gdp_epsilon(composed_mu(sigma, count, sensitivity), delta)


def gaussian_sigma(epsilon: float, delta: float, count: int, sensitivity: float = PROBABILITY_SENSITIVITY) -> float:
    """The noise sigma with which ``count`` Gaussian releases meet (epsilon, delta) exactly: dp-accounting's
    analytic-Gaussian calibration (``GaussianPrivacyLoss.from_privacy_guarantee``, a bisection on the exact
    curve) of one release of sensitivity sqrt(count) x ``sensitivity`` (the same mu), within about 1e-8 of
    the smallest; checked on :func:`gdp_delta` and nudged up if needed, so it always meets the target."""
    from dp_accounting.pld.common import DifferentialPrivacyParameters
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    if not (epsilon > 0 and 0 < delta < 1 and count >= 1):
        raise ValueError(f"need epsilon > 0, 0 < delta < 1, count >= 1; got {epsilon}, {delta}, {count}")
    target = DifferentialPrivacyParameters(epsilon, delta)
    sigma = GaussianPrivacyLoss.from_privacy_guarantee(target, math.sqrt(count) * sensitivity).standard_deviation
    while gdp_delta(epsilon, composed_mu(sigma, count, sensitivity)) > delta:  # more noise, never less
        sigma = math.nextafter(sigma, math.inf)
    return float(sigma)


def guarantee(sigma: float, count: int, delta: float, sensitivity: float = PROBABILITY_SENSITIVITY) -> Guarantee:
    """The record of a party's ``count`` Gaussian answers with noise ``sigma``, stated at ``delta``."""
    mu = composed_mu(sigma, count, sensitivity)
    return Guarantee(
        gdp_epsilon(mu, delta),
        delta,
        Adjacency.REPLACE_ONE,
        UNIT,
        f"exact: {count} composed Gaussian releases = {mu:.4g}-GDP (Balle & Wang 2018), "
        f"L2 sensitivity {sensitivity:.4g}",
        count,
        f"{GDP}{mu!r}",
    )
