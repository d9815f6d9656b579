"""LDP-DL's owner-side sanitizers (paper 004) and PATE's GNMax: closed forms, exact enumeration, simulation."""

import itertools
import math

import numpy as np
import pytest

from pipelib.privacy import gaussian, pate
from pipelib.privacy import soft_label as sl

EPS = [0.3, 1.0, 2.5, 6.0]


def rng(i=0):
    return np.random.default_rng(1234 + i)


def test_box_mapping_round_trips_and_rejects_non_probabilities():
    p = np.array([[0.1, 0.9, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    assert np.allclose(sl.from_box(sl.to_box(p)), p)
    assert sl.to_box(p).min() >= -1 and sl.to_box(p).max() <= 1
    with pytest.raises(ValueError, match="probabilities"):
        sl.to_box(np.array([[1.5, -0.5]]))


def test_a_nan_answer_becomes_the_uniform_vector_before_the_sanitizer():
    """A diverged teacher's NaN row: in the box as the uniform vector (it would otherwise pass through clipping
    and every sanitizer and be released as NaN, whatever epsilon)."""
    p = np.array([[np.nan, 0.5, 0.5], [0.2, 0.3, 0.5]])
    z = sl.to_box(p)
    assert np.allclose(z[0], 2 / 3 - 1) and np.allclose(z[1], 2 * p[1] - 1)
    for name in sl.SANITIZERS:
        assert np.isfinite(sl.sanitize(name, p, 1.0, rng())).all(), name


@pytest.mark.parametrize("eps", EPS)
def test_pm_one_density_is_a_density_and_its_ratio_is_exactly_e_eps(eps):
    c = sl.pm_bounds(eps)
    y = np.linspace(-c, c, 20001)
    inputs = np.linspace(-1, 1, 41)
    dens = np.array([sl.pm_density(y, t, eps) for t in inputs])
    mass = (dens[:, :-1] + dens[:, 1:]).sum(1) / 2 * (y[1] - y[0])
    assert np.allclose(mass, 1.0, atol=2e-3)
    ratio = dens.max(0) / dens.min(0)  # worst pair of inputs at every output
    assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
    assert ratio.max() == pytest.approx(math.exp(eps))  # attained: no slack in the guarantee


@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_pm_one_is_unbiased_in_range_and_follows_its_density(eps):
    c = sl.pm_bounds(eps)
    for i, t in enumerate([-1.0, -0.3, 0.0, 0.7, 1.0]):
        out = sl.pm_one(np.full(200_000, t), eps, rng(i))
        assert out.min() >= -c and out.max() <= c
        se = out.std() / math.sqrt(len(out))
        assert abs(out.mean() - t) < 5 * se
        left = (c + 1) / 2 * t - (c - 1) / 2
        inside = np.mean((out >= left) & (out <= left + c - 1))
        p_in = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
        assert abs(inside - p_in) < 5 * math.sqrt(p_in * (1 - p_in) / len(out))


@pytest.mark.parametrize(
    ("k", "eps", "m"), [(1, 1.3, 1), (10, 0.5, 1), (10, 5.0, 2), (10, 8.0, 3), (10, 40.0, 10), (3, 100.0, 3)]
)
def test_pm_reports_m_coordinates_scaled_and_unbiased(k, eps, m):
    assert sl.pm_coordinates(k, eps) == m
    z = np.tile(np.linspace(-1, 1, k), (100_000, 1))
    out = sl.pm(z, eps, rng())
    assert ((out != 0).sum(1) == m).all()
    bound = k / m * sl.pm_bounds(eps / m)
    assert np.abs(out).max() <= bound
    se = out.std(0) / math.sqrt(len(out))
    assert (np.abs(out.mean(0) - z[0]) < 5 * se + 1e-6).all()  # float rounding when eps/m is large


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 10])
@pytest.mark.parametrize("eps", [0.4, 1.3, 5.0])
def test_duchi_exact_probabilities_unbiased_and_e_eps_ratio(k, eps):
    cube = np.array(list(itertools.product([-1.0, 1.0], repeat=k)))
    probs = sl.duchi_probabilities(cube, eps)  # P(t | v): rows t, columns v
    assert np.allclose(probs.sum(0), 1.0)
    # unbiased: E[B t | v] = v for every vertex v, so E[output | z] = z by linearity
    assert np.allclose(sl.duchi_scale(k, eps) * cube.T @ probs, cube.T, atol=1e-9)
    # P(t | z) is multilinear in z: the worst pair of inputs are vertices
    ratio = probs.max(1) / probs.min(1)
    assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
    assert ratio.max() == pytest.approx(math.exp(eps))


def test_duchi_samples_follow_the_exact_probabilities_and_are_unbiased():
    k, eps = 4, 1.0
    z = np.array([0.6, -0.2, 0.0, -1.0])
    out = sl.duchi(np.tile(z, (200_000, 1)), eps, rng(3))
    b = sl.duchi_scale(k, eps)
    assert np.allclose(np.abs(out), b)
    se = out.std(0) / math.sqrt(len(out))
    assert (np.abs(out.mean(0) - z) < 5 * se).all()
    cube = np.array(list(itertools.product([-1.0, 1.0], repeat=k)))
    pv = np.prod(np.where(cube > 0, (1 + z) / 2, (1 - z) / 2), axis=1)  # P(v | z)
    expected = sl.duchi_probabilities(cube, eps) @ pv
    index = ((out > 0).astype(int) * (2 ** np.arange(k - 1, -1, -1))).sum(1)
    observed = np.bincount(index, minlength=2**k) / len(out)
    assert np.abs(observed - expected).max() < 5 * math.sqrt(expected.max() / len(out))


@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_laplace_box_density_ratio_and_unbiasedness(eps):
    k = 2
    scale = 2 * k / eps
    y = np.stack(np.meshgrid(np.linspace(-8, 8, 161), np.linspace(-8, 8, 161)), -1).reshape(-1, 2)
    corners = np.array(list(itertools.product([-1.0, 1.0], repeat=k)))
    inputs = np.concatenate([corners, np.random.default_rng(0).uniform(-1, 1, (20, k))])
    log_dens = np.array([-np.abs(y - z).sum(1) / scale for z in inputs])  # up to the common constant
    worst = (log_dens.max(0) - log_dens.min(0)).max()
    assert worst <= eps + 1e-12 and worst == pytest.approx(eps)
    z = np.array([[0.3, -0.9]])
    out = sl.laplace_box(np.repeat(z, 200_000, 0), eps, rng(4))
    assert (np.abs(out.mean(0) - z[0]) < 5 * out.std(0) / math.sqrt(len(out))).all()


def test_sanitize_estimates_the_mean_probability_without_side_information():
    p = np.random.default_rng(1).dirichlet(np.ones(10), size=50)
    for name in sl.SANITIZERS:
        reps = np.stack([sl.sanitize(name, p, 4.0, rng(i)) for i in range(400)])
        est = sl.from_box(reps.mean(0))  # the server's estimate from sanitized answers only
        se = reps.std(0) / 2 / math.sqrt(len(reps))
        assert (np.abs(est - p) < 5 * se + 1e-12).mean() > 0.99, name


def test_budget_follows_the_owner_that_answers_most():
    loads = np.array([3, 5, 2, 0])
    per = sl.answer_epsilon(10.0, loads)
    assert per == 2.0
    spent = [sl.owner_guarantee("pm", per, int(c)).epsilon for c in loads]
    assert max(spent) == pytest.approx(10.0) and all(s <= 10.0 + 1e-12 for s in spent)
    g = sl.owner_guarantee("duchi", per, 5)
    assert g.delta == 0 and g.releases == 5 and g.epsilon_at(1e-9) == g.epsilon
    with pytest.raises(ValueError, match="no owner"):
        sl.answer_epsilon(1.0, np.zeros(3))


@pytest.mark.parametrize("eps", [5.0, 8.0])
def test_gnmax_sigma_meets_its_target_and_lies_between_the_exact_and_classic_bounds(eps):
    q, delta = 1000, 1e-5
    sigma = pate.gnmax_sigma(eps, delta, q)
    got = pate.gnmax_epsilon(sigma, q, delta)
    assert got <= eps and got == pytest.approx(eps, rel=2e-3)
    # the exact curve of q composed Gaussians (GDP) is below the RDP bound ...
    assert gaussian.gaussian_epsilon(sigma, q, delta, pate.SENSITIVITY) < got
    # ... and the classic RDP-to-DP conversion (eps(alpha) = q alpha / sigma^2) above it
    classic = min(q * a / sigma**2 + math.log(1 / delta) / (a - 1) for a in np.linspace(1.01, 200, 20000))
    assert got <= classic + 1e-9
    g = pate.guarantee(sigma, q, delta)
    assert g.epsilon == got and g.epsilon_at(delta) == pytest.approx(got)
    assert g.epsilon_at(1e-7) > got  # a smaller delta costs more epsilon on the same curve


def test_gnmax_returns_the_argmax_when_the_noise_is_negligible_and_not_when_it_dominates():
    votes = np.array([[0, 9, 1], [5, 0, 5.5], [2, 2, 6]])
    assert (pate.gnmax(votes, 1e-6, rng()) == [1, 2, 2]).all()
    many = np.tile(votes[1], (20_000, 1))
    labels = pate.gnmax(many, 50.0, rng(1))
    assert 0.3 < np.mean(labels == 0) < 0.5  # close votes: the noise decides nearly half the time


def test_pm_bounds_and_duchi_scale_match_specs_derived_values():
    # SPECS.md 4.2 [D]: epsilon_i = epsilon/3 (r = 3) -> PM-ONE's C at epsilon 1, 5, 8
    for eps, c in ((1.0, 12.03), (5.0, 2.54), (8.0, 1.72)):
        assert sl.pm_bounds(eps / 3) == pytest.approx(c, abs=0.005)
    assert sl.pm_coordinates(10, 10 / 3) == 1  # m = 1 at every epsilon_i of the paper's Table 1 regime
    # C_k for k = 10: SPECS quotes (512 + 126)/126 = 5.063 for the form that is not epsilon-LDP;
    # ours, 2^9 / binom(9, 4) = 512/126 = 4.063 (see the module docstring)
    assert sl.duchi_scale(10, 1.0) / ((math.e + 1) / (math.e - 1)) == pytest.approx(512 / 126)
