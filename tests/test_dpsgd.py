"""DP-SGD (the central-DP baseline): its accountant against a second implementation and a closed form, the
Opacus wiring against the noise it must add (by simulation), keyed randomness, frozen normalization."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from pipelib.methods import dpsgd as method
from pipelib.privacy import THRESHOLD, Adjacency, dpsgd
from pipelib.privacy.gaussian import gdp_epsilon
from pipelib.train.models import build
from pipelib.train.supervised import save_model


def test_sampling_rate_and_steps_per_epoch():
    assert dpsgd.sampling(3600, 64) == (1 / 57, 57)
    assert dpsgd.sampling(64, 64) == (1.0, 1)
    with pytest.raises(ValueError, match="needs records"):
        dpsgd.sampling(0, 64)


@pytest.mark.parametrize("eps", [0.5, 8.0])
@pytest.mark.parametrize("q,steps", [(1 / 57, 570), (0.01, 2000), (0.1, 100)])
def test_noise_multiplier_is_the_smallest_that_meets_the_target_under_replace_one(eps, q, steps):
    z = dpsgd.noise_multiplier(eps, 1e-5, q, steps)
    spent = dpsgd.pld_epsilon(z, q, steps, 1e-5)
    assert spent <= eps and dpsgd.pld_epsilon(z / (1 + 2 * dpsgd.Z_TOLERANCE), q, steps, 1e-5) > eps
    # replace-one needs more noise than add/remove: Opacus's add/remove z for the target is below it
    assert dpsgd.opacus_epsilon(z, q, steps, 1e-5) < eps


def _hockey_stick(z: float, q: float, eps: float) -> float:
    """delta(eps) of one Poisson-sampled Gaussian step under replace-one, by quadrature: the worst pair puts the
    replaced record's clipped gradient at +C or -C, so the outputs are (1 - q) N(0, z^2) + q N(+-1, z^2) (C = 1)."""
    from scipy import integrate, stats

    def p(x):
        return (1 - q) * stats.norm.pdf(x, 0, z) + q * stats.norm.pdf(x, 1, z)

    def r(x):
        return (1 - q) * stats.norm.pdf(x, 0, z) + q * stats.norm.pdf(x, -1, z)

    return integrate.quad(lambda x: max(0.0, p(x) - math.exp(eps) * r(x)), -12 * z - 2, 12 * z + 2, limit=400)[0]


@pytest.mark.parametrize("z,q", [(0.8, 0.05), (1.5, 0.2), (3.0, 1.0)])
def test_one_step_matches_the_hockey_stick_divergence_of_the_replace_one_pair(z, q):
    """One step: the PLD accountant's epsilon at delta is where the exact divergence of the worst replace-one pair
    (numerical quadrature, independent of dp-accounting) falls to delta; the accountant is sound (its epsilon is
    not below) and within its discretisation (0.01)."""
    eps = dpsgd.pld_epsilon(z, q, 1, 1e-3)
    assert _hockey_stick(z, q, eps) <= 1e-3 * 1.001
    assert _hockey_stick(z, q, eps - 0.01) > 1e-3


@pytest.mark.parametrize("z,steps", [(1.0, 1), (2.0, 10), (5.0, 100)])
def test_without_subsampling_replace_one_is_the_gaussian_composition_at_twice_the_sensitivity(z, steps):
    """q = 1: T Gaussian steps whose replaced record moves the sum by 2C are exactly 2 sqrt(T)/z-GDP (Dong, Roth
    and Su); the PLD epsilon is that (its pessimistic discretisation errs up, by at most 1 %)."""
    exact = gdp_epsilon(2 * math.sqrt(steps) / z, 1e-5)
    assert exact <= dpsgd.pld_epsilon(z, 1.0, steps, 1e-5) <= 1.01 * exact + 1e-3


@pytest.mark.parametrize("z,q,steps", [(1.0, 1 / 57, 570), (0.8, 0.01, 2000)])
def test_replace_one_lies_between_add_remove_and_its_group_privacy_bound(z, q, steps):
    """Replace one = remove one then add one: at least the add/remove epsilon (PLD; and Opacus's RDP add/remove
    agrees with dp-accounting's RDP, a second implementation, to 0.5 %), at most twice it at delta (1 + e^eps)."""
    delta = 1e-5
    add_remove = dpsgd.pld_epsilon(z, q, steps, delta, replace=False)
    replace = dpsgd.pld_epsilon(z, q, steps, delta)
    assert add_remove < replace
    assert dpsgd.pld_epsilon(z, q, steps, (1 + math.exp(add_remove)) * delta) <= 2 * add_remove
    rdp = dpsgd.opacus_epsilon(z, q, steps, delta)
    assert add_remove <= rdp and dpsgd.rdp_epsilon(z, q, steps, delta) == pytest.approx(rdp, rel=5e-3)


def test_the_guarantee_is_replace_one_of_a_pooled_record_by_the_pld_accountant():
    g = dpsgd.guarantee(1.2, 0.02, 500, 1e-5)
    assert g.adjacency == Adjacency.REPLACE_ONE and g.unit == dpsgd.UNIT and g.releases == 500
    assert g.epsilon == dpsgd.pld_epsilon(1.2, 0.02, 500, 1e-5) and g.curve == THRESHOLD
    assert g.epsilon_at(1e-5) == g.epsilon and g.epsilon_at(1e-3) == g.epsilon and g.epsilon_at(1e-6) == math.inf


class Zero(nn.Module):
    """A linear map of 8 weights: on a zero input every per-example gradient is zero, so an update is noise."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 4, bias=False)

    def forward(self, x):
        return self.fc(x)


def updates(noise_seed: int, steps: int, z: float, settings, n: int = 400) -> np.ndarray:
    torch.manual_seed(0)
    model = Zero()
    module, opt = method.private(model, torch.optim.SGD, settings, n, z, torch.Generator().manual_seed(noise_seed))
    out = []
    for _ in range(steps):
        before = model.fc.weight.detach().clone()
        loss = module(torch.zeros(5, 2)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append((model.fc.weight.detach() - before).numpy().ravel())
    return np.concatenate(out)


def test_opacus_adds_noise_of_std_z_c_over_the_expected_batch():
    settings = method.DpSgdSettings(epochs=1, batch=40, lr=1.0, max_grad_norm=0.5)
    d = updates(1, 500, 1.3, settings)  # 4,000 draws
    expected_batch = 400 * dpsgd.sampling(400, 40)[0]
    assert d.std() == pytest.approx(1.3 * 0.5 / expected_batch, rel=0.05)
    assert abs(d.mean()) < 4 * d.std() / math.sqrt(len(d))


def test_the_noise_is_keyed_by_its_generator():
    settings = method.DpSgdSettings(epochs=1, batch=40, lr=1.0, max_grad_norm=1.0)
    assert np.array_equal(updates(7, 5, 1.0, settings), updates(7, 5, 1.0, settings))
    assert not np.allclose(updates(7, 5, 1.0, settings), updates(8, 5, 1.0, settings))


def test_clipping_bounds_each_records_contribution():
    """No noise (z = 0): one step's update is the mean of clipped per-example gradients, at most C in norm."""
    settings = method.DpSgdSettings(epochs=1, batch=4, lr=1.0, max_grad_norm=0.25)
    torch.manual_seed(0)
    model = Zero()
    module, opt = method.private(model, torch.optim.SGD, settings, 4, 0.0, torch.Generator().manual_seed(0))
    before = model.fc.weight.detach().clone()
    (module(torch.full((4, 2), 1000.0)).sum()).backward()  # huge gradients
    opt.step()
    assert float((model.fc.weight.detach() - before).norm()) <= 0.25 + 1e-6


def test_a_pretrained_models_batchnorm_is_frozen_and_reads_no_batch_statistics():
    torch.manual_seed(0)
    model = method.dp_ready(build("cnn2-4-8-d0.1", (1, 28, 28), 6), pretrained=True)
    bn = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    stats = [m.running_mean.clone() for m in bn]
    settings = method.DpSgdSettings(epochs=1, batch=8, lr=0.01, max_grad_norm=1.0)
    module, opt = method.private(model, torch.optim.Adam, settings, 64, 1.0, torch.Generator().manual_seed(0))
    x = torch.randint(0, 255, (64, 1, 28, 28), dtype=torch.uint8)
    y = torch.randint(0, 6, (64,))
    weights = model.classifier.weight.detach().clone()
    assert method.train(module, opt, x, y, 1 / 8, 8, torch.Generator().manual_seed(1)) == 0
    assert all(torch.equal(m.running_mean, s) for m, s in zip(bn, stats))  # public statistics kept
    assert all(not p.requires_grad for m in bn for p in m.parameters())
    assert not torch.equal(model.classifier.weight, weights)  # the rest trained


def test_a_model_from_scratch_uses_groupnorm_and_reloads(tmp_path):
    model = method.dp_ready(build("cnn2-4-8-d0.1", (1, 28, 28), 6), pretrained=False)
    assert not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())
    assert any(isinstance(m, nn.GroupNorm) for m in model.modules())
    save_model(model, tmp_path / "m.pt", norm="group")
    back = method.load_dp_model(tmp_path / "m.pt", "cpu")
    x = torch.rand(3, 1, 28, 28)
    model.eval(), back.eval()
    assert torch.allclose(model(x), back(x))


def test_a_record_whose_gradient_is_not_finite_adds_zero_and_the_others_are_kept():
    """A NaN in one record's gradient (norm NaN: clipping does not bound it) would make the noisy sum NaN; that
    record adds zero instead, so the step equals the step on the other records alone (same divisor n q)."""
    settings = method.DpSgdSettings(epochs=1, batch=4, lr=1.0, max_grad_norm=0.5)
    x = torch.tensor([[1.0, 2.0], [float("nan"), 1.0], [-1.0, 0.5], [3.0, -2.0]])
    y = torch.tensor([0, 1, 1, 0])
    steps = []
    for rows in ([0, 1, 2, 3], [0, 2, 3]):
        torch.manual_seed(0)
        model = nn.Linear(2, 2)
        module, opt = method.private(model, torch.optim.SGD, settings, 4, 0.0, torch.Generator().manual_seed(0))
        before = model.weight.detach().clone()
        nn.functional.cross_entropy(module(x[rows]), y[rows]).backward()  # Opacus undoes the mean
        assert method.drop_non_finite(opt) == (1 if len(rows) == 4 else 0)
        opt.step()
        steps.append(model.weight.detach() - before)
    assert torch.isfinite(steps[0]).all() and torch.allclose(steps[0], steps[1])


def test_training_drops_non_finite_gradients_every_step(monkeypatch):
    """The job's loop calls the guard before each step (removing the call makes this fail)."""
    calls = []
    monkeypatch.setattr(method, "drop_non_finite", lambda opt: calls.append(opt) or 0)
    settings = method.DpSgdSettings(epochs=1, batch=8, lr=0.01, max_grad_norm=1.0)
    model = method.dp_ready(build("cnn2-4-8-d0.1", (1, 28, 28), 6), pretrained=True)
    module, opt = method.private(model, torch.optim.SGD, settings, 16, 1.0, torch.Generator().manual_seed(0))
    x, y = torch.randint(0, 255, (16, 1, 28, 28), dtype=torch.uint8), torch.randint(0, 6, (16,))
    assert method.train(module, opt, x, y, 1.0, 3, torch.Generator().manual_seed(1)) == 0
    assert len(calls) == 3


def test_a_model_that_diverged_is_never_released():
    """A model holding NaN or inf (the noisy updates diverged): the job refuses to write it."""
    model = nn.Linear(3, 2)
    method.refuse_non_finite(model)  # finite: nothing to say
    with torch.no_grad():
        model.bias[0] = float("nan")
    with pytest.raises(RuntimeError, match="training diverged .* first bias"):
        method.refuse_non_finite(model)
