"""The DP-SGD baseline (issue 16): one model trained on all parties' records pooled with DP-SGD through
Opacus, the central-DP reference every reader knows; its privacy is the model's (one record of the pooled
data, replace one: its n is published), by dp-accounting's PLD accountant (:mod:`pipelib.privacy.dpsgd`).

Initialization: the scenario's public pre-trained model where the public dataset is not the private one
(the FedMD-NFDP scenarios), with its BatchNorm layers frozen as affine maps of the public statistics (per-
example gradients cannot pass through batch statistics, and frozen ones read no private record); from
scratch where public and private data are splits of one dataset (pre-training reads that dataset's train
split, the private pool), with BatchNorm replaced by GroupNorm (Opacus's fix).

The mechanism's randomness (which records each step samples, the gradient noise) is keyed by the release
(scenario, architecture, epsilon) as every mechanism's is; the initialization and dropout by the run.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from opacus import PrivacyEngine
from opacus.validators import ModuleValidator
from torch import nn

from ..data.loaders import load_labelled
from ..io import write_json
from ..job import Job
from ..privacy import Draw, delta_vacuous, release_row, write_releases
from ..privacy import dpsgd as mechanism
from ..runs import DpsgdRun
from ..schema import result_row
from ..seeding import release_key, release_torch_seed, torch_seed
from ..train import loop
from ..train.checkpoint import load_torch
from ..train.models import build
from ..train.supervised import load_model, model_from_state, save_model

log = logging.getLogger(__name__)
RULE = "dpsgd"


@dataclass(frozen=True)
class DpSgdSettings:
    """Epochs (T = epochs / q steps), expected batch size (q = 1 / ceil(n / batch)), Adam's learning rate and
    the per-example clipping norm C."""

    epochs: int
    batch: int
    lr: float
    max_grad_norm: float

    @classmethod
    def from_config(cls, cfg: dict) -> DpSgdSettings:
        return cls(int(cfg["epochs"]), int(cfg["batch"]), float(cfg["lr"]), float(cfg["max_grad_norm"]))


def dp_ready(model: nn.Module, pretrained: bool) -> nn.Module:
    """The model Opacus can train: a pre-trained model's BatchNorm layers frozen (no gradient, eval mode:
    public statistics), a model from scratch with BatchNorm replaced by GroupNorm."""
    if not pretrained:
        return ModuleValidator.fix(model)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.requires_grad_(False)
    return model


def load_dp_model(path, device) -> nn.Module:
    """A DP-SGD model from its file (``norm``: batch, frozen, or group, from scratch)."""

    state = load_torch(path)
    if state.get("norm", "batch") == "batch":
        return model_from_state(state, device, where=str(path))
    model = dp_ready(build(state["arch"], state["in_shape"], state["n_classes"]), pretrained=False)
    model.load_state_dict(state["state_dict"])
    return model.to(device)


def _train_mode(model: nn.Module) -> None:
    model.train()
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.eval()  # frozen: public running statistics, never batch statistics


def private(model: nn.Module, optimizer, settings: DpSgdSettings, n: int, z: float, noise: torch.Generator):
    """``model`` and an ``optimizer`` (class) over its trainable weights, made DP by Opacus: per-example
    gradients clipped to ``settings.max_grad_norm``, Gaussian noise of std z C (from ``noise``) added to
    their sum, divided by the expected batch n q. The sampling is ours (:func:`train`)."""

    q, _ = mechanism.sampling(n, settings.batch)
    opt = optimizer([p for p in model.parameters() if p.requires_grad], lr=settings.lr)
    shape = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(n)), batch_size=settings.batch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus's notes on secure RNG (our draws are keyed instead)
        module, opt, _ = PrivacyEngine(accountant="rdp").make_private(
            module=model,
            optimizer=opt,
            data_loader=shape,  # only its length: Opacus's q = 1 / len(shape) = ours
            noise_multiplier=z,
            max_grad_norm=settings.max_grad_norm,
            poisson_sampling=False,  # we sample Poisson batches ourselves, from the keyed generator
            noise_generator=noise,
        )
    if opt.expected_batch_size != int(n * q) or abs(1 / len(shape) - q) > 1e-12:
        raise RuntimeError("Opacus's sampling rate differs from the one accounted for")
    return module, opt


def train(module, opt, x, y, q: float, steps: int, draws: torch.Generator, per_epoch: int = 0) -> int:
    """``steps`` DP-SGD steps: each takes every record with probability ``q`` (from ``draws``); returns the
    steps skipped because none was taken (probability (1 - q)^n each; the guarantee, which counts every
    planned step, stays an upper bound).  A record whose gradient holds NaN or inf adds zero that step
    (:func:`drop_non_finite`), counted in the log."""
    n, skipped, dropped = len(x), 0, 0
    for step in range(steps):
        _train_mode(module)
        idx = (torch.rand(n, generator=draws) < q).nonzero().squeeze(1).to(x.device)
        if len(idx) == 0:
            skipped += 1
            continue
        loss = F.cross_entropy(module(loop.scale(x[idx])), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        dropped += drop_non_finite(opt)
        opt.step()
        loop.advance(len(idx))
        if per_epoch and (step + 1) % per_epoch == 0:
            log.info("epoch %d: last loss %.4f", (step + 1) // per_epoch, float(loss.detach()))
    if dropped:
        log.warning("DP-SGD: %d per-example gradients held NaN or inf and added zero (training diverged)", dropped)
    return skipped


def drop_non_finite(opt) -> int:
    """Zero every per-example gradient (Opacus's ``grad_sample``, all of one record's tensors) that holds NaN or
    inf, before Opacus clips them: its norm is NaN or inf, which clipping does not bound (C / inf = 0 times inf
    is NaN), so one record could make the noisy sum NaN.  Zero has norm 0 <= C: every record's contribution
    stays within the sensitivity the noise is calibrated to, whatever its data.  Returns how many were zeroed;
    finite gradients are left as they are."""
    grads = [p.grad_sample if isinstance(p.grad_sample, torch.Tensor) else torch.cat(p.grad_sample) for p in opt.params]
    bad = torch.zeros(len(grads[0]), dtype=torch.bool, device=grads[0].device)
    for g in grads:
        bad |= ~torch.isfinite(g.reshape(len(g), -1)).all(dim=1)
    count = int(bad.sum())
    if count:
        for p, g in zip(opt.params, grads):
            p.grad_sample = g.masked_fill(bad.view(-1, *[1] * (g.dim() - 1)), 0.0)
    return count


def refuse_non_finite(model: nn.Module) -> None:
    """Release nothing from a run that diverged.  Non-finite per-example gradients add zero
    (:func:`drop_non_finite`), so a model holding NaN or inf comes only from the noisy updates themselves
    (a learning rate too large): refusing it is post-processing of the private updates."""
    bad = [name for name, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
    if bad:
        raise RuntimeError(
            f"DP-SGD: training diverged ({len(bad)} weight tensors hold NaN or inf, first {bad[0]}); nothing is "
            "released: lower dpsgd.lr or dpsgd.max_grad_norm"
        )


def dpsgd(job: Job, settings: DpSgdSettings, *, delta: float, n_public_classes: int) -> dict:
    """Train the job's ``arch`` with DP-SGD at (``eps``, ``delta``) on the pooled records (input
    ``parties``); write the result row, the model (output ``model``) and its guarantee (output
    ``releases``).  Input ``model`` is the public pre-trained model; without it training starts from
    scratch.  The job's wildcards name the release."""
    run = DpsgdRun.of(job.release)
    scenario, arch, epsilon = job.scenario, run.arch, run.epsilon
    seed, randomness, release, out = job.seed, job.randomness, job.release_id, job.output
    party_paths, model_path = job.input["parties"], job.input.get("model")
    dev = loop.start(job.threads, job.device)  # fp32: Opacus clips per-sample gradients (docs/benchmarks.md)
    pooled = [load_labelled(p, dev, offset=n_public_classes) for p in party_paths]
    x, y = torch.cat([p[0] for p in pooled]), torch.cat([p[1] for p in pooled])
    x_test, y_test, meta = load_labelled(job.input["test"], dev, offset=n_public_classes)
    task = (n_public_classes, n_public_classes + len(meta["task_classes"]))
    loop.seed_everything(torch_seed(seed, RULE, scenario, arch))
    if model_path is not None:
        model = load_model(model_path, dev, task[1])
    else:
        model = build(arch, tuple(x.shape[1:]), task[1]).to(dev)
    model = dp_ready(model.to(memory_format=torch.contiguous_format), model_path is not None)

    n = len(x)
    q, per_epoch = mechanism.sampling(n, settings.batch)
    steps = settings.epochs * per_epoch
    z = mechanism.noise_multiplier(epsilon, delta, q, steps)
    guarantee = mechanism.guarantee(z, q, steps, delta)
    key = release_key(RULE, release)
    noise = torch.Generator(device=dev).manual_seed(
        release_torch_seed(seed, randomness, RULE, {**release, "draw": "noise"})
    )
    draws = torch.Generator().manual_seed(release_torch_seed(seed, randomness, RULE, {**release, "draw": "sampling"}))
    log.info(
        "DP-SGD %s on %s: n = %d, q = %.5f, %d steps, z = %.4f, C = %g: (%.4f, %g)-DP",
        arch,
        scenario,
        n,
        q,
        steps,
        z,
        settings.max_grad_norm,
        guarantee.epsilon,
        delta,
    )

    module, opt = private(model, torch.optim.Adam, settings, n, z, noise)
    t0 = time.perf_counter()
    with loop.progress(steps * n * q, f"DP-SGD {arch} eps {epsilon:g}"):
        skipped = train(module, opt, x, y, q, steps, draws, per_epoch)
    model = module._module
    refuse_non_finite(model)
    save_model(model, out["model"], scenario=scenario, norm="batch" if model_path is not None else "group")
    accuracy = loop.accuracy(model, x_test, y_test, outputs=task)
    write_releases(
        [
            release_row(
                "DP-SGD",
                scenario,
                str(out["model"]),
                -1,
                "dpsgd",
                guarantee,
                drawn=Draw(randomness, key),
                n=n,
                sigma=z,
                seed=seed,
            )
        ],
        out["releases"],
    )
    row = result_row(
        guarantee,
        method="DP-SGD",
        scenario=scenario,
        public_dataset=None,
        private_dataset=meta["dataset"],
        mechanism="dpsgd",
        accuracy=accuracy,
        accuracy_any_class=loop.accuracy(model, x_test, y_test),
        delta_vacuous=delta_vacuous(delta, n),
        n=n,
        k=n,
        parties=len(party_paths),
        test_n=len(x_test),
        arch=arch,
        epochs=settings.epochs,
        sigma=z,
        # reference: the same run's add/remove-one epsilon (the same PLD accountant; the unit DP-SGD papers quote)
        epsilon_add_remove=mechanism.pld_epsilon(z, q, steps, delta, replace=False),
        sampling_rate=q,
        steps=steps,
        steps_skipped=skipped,
        max_grad_norm=settings.max_grad_norm,
        init="public pre-trained, BatchNorm frozen" if model_path is not None else "scratch, GroupNorm",
        randomness=randomness,
        wall_seconds=time.perf_counter() - t0,
        **loop.where(dev),
        seed=seed,
        preset=job.preset,
    )
    write_json(row, out["result"])
    log.info("DP-SGD test accuracy %.4f at epsilon %.4f", accuracy, guarantee.epsilon)
    return row
