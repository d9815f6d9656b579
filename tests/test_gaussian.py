"""FedMD-LDP's Gaussian calibration: the exact composed-Gaussian curve against its closed form, a Monte
Carlo estimate of the privacy loss, dp-accounting's PLD accountant, and the RDP cross-check."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from pipelib.privacy import gaussian
from pipelib.privacy.nfdp import WITH_REPLACEMENT, nfdp


def closed_form_delta(eps, mu):
    """Balle & Wang (2018), Theorem 8: delta(eps) of a Gaussian mechanism with sensitivity/sigma = mu."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("eps,mu", [(0.0, 0.5), (0.05, 0.015), (1.0, 1.0), (3.0, 2.0), (0.5, 0.1)])
def test_gdp_delta_is_the_closed_form(eps, mu):
    assert gaussian.gdp_delta(eps, mu) == pytest.approx(closed_form_delta(eps, mu), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("eps,mu", [(0.5, 1.0), (1.0, 2.0)])
def test_gdp_delta_matches_a_simulated_privacy_loss(eps, mu):
    """delta(eps) = E[(1 - e^(eps - L))+] with the privacy loss L = mu Z + mu^2/2 of N(mu, 1) vs N(0, 1)."""
    z = np.random.default_rng(0).standard_normal(2_000_000)
    loss = mu * z + mu**2 / 2
    est = np.maximum(0.0, 1 - np.exp(eps - loss)).mean()
    assert est == pytest.approx(gaussian.gdp_delta(eps, mu), rel=0.01)


# The sigmas the exact calibration needs for the reduced preset's FedMD-LDP rows: 10,000 softmax answers
# (sensitivity sqrt 2) at the (epsilon, delta) of NFDP with replacement (n, k) = FEMNIST (364, 16),
# CIFAR (300, 16) and CIFAR (300, 300); RDP needed about 1.42x more (1,301, 1,078, 84.7).
@pytest.mark.parametrize("n,k,sigma", [(364, 16, 915.0), (300, 16, 758.7), (300, 300, 59.50)])
def test_exact_sigmas_of_the_reduced_preset(n, k, sigma):
    g = nfdp(n, k, WITH_REPLACEMENT)
    got = gaussian.gaussian_sigma(g.epsilon, g.delta, 10000)
    assert got == pytest.approx(sigma, abs=0.05)
    assert 1.35 < gaussian.rdp_sigma(g.epsilon, g.delta, 10000) / got < 1.5


@pytest.mark.parametrize(
    "eps,delta,count", [(0.0439, 0.0431, 10000), (1.0, 1e-5, 1), (0.99, 0.63, 5000), (8.0, 1e-5, 100000)]
)
def test_calibrated_sigma_suffices_and_is_the_smallest(eps, delta, count):
    sigma = gaussian.gaussian_sigma(eps, delta, count)
    mu = gaussian.composed_mu(sigma, count)
    assert gaussian.gdp_delta(eps, mu) <= delta  # suffices, exactly
    assert gaussian.gdp_delta(eps, mu * (1 + 1e-6)) > delta  # 1e-6 less noise does not
    assert gaussian.gaussian_epsilon(sigma, count, delta) <= eps * (1 + 1e-12)
    assert gaussian.rdp_epsilon(sigma, count, delta) >= eps  # RDP is an upper bound: it never claims less


@pytest.mark.parametrize("eps,delta,count", [(0.0439, 0.0431, 10000), (1.0, 1e-5, 50)])
def test_exact_calibration_agrees_with_the_pld_accountant(eps, delta, count):
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    sigma = gaussian.gaussian_sigma(eps, delta, count)
    acc = PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(sigma / gaussian.PROBABILITY_SENSITIVITY), count)
    assert acc.get_epsilon(delta) == pytest.approx(eps, rel=2e-3)


def test_guarantee_record_of_gaussian_answers():
    g = gaussian.guarantee(915.0, 10000, 0.0431)
    assert g.releases == 10000 and g.curve.startswith("gdp mu=") and g.adjacency == "replace one record"
    assert g.epsilon == pytest.approx(gaussian.gaussian_epsilon(915.0, 10000, 0.0431))
    with pytest.raises(ValueError):
        gaussian.gaussian_sigma(0.0, 0.1, 10)
