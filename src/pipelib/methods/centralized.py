"""The centralized baseline (paper 002): one architecture trained on all parties' records pooled, from
the shared pre-trained initialization; the utility upper bound, with no privacy."""

from __future__ import annotations

import logging
import time

import torch

from ..data.loaders import load_labelled
from ..io import write_json
from ..privacy import NO_PRIVACY
from ..schema import result_row
from ..seeding import torch_seed
from ..train import loop
from ..train.checkpoint import clear_checkpoint, fingerprint
from ..train.models import optimizer
from ..train.supervised import TrainSettings, load_model, save_model, train_supervised

log = logging.getLogger(__name__)


def centralized(
    *,
    scenario: str,
    arch: str,
    party_paths: list,
    model_path,
    test_path,
    n_public_classes: int,
    settings: TrainSettings,
    device: str,
    threads: int,
    seed: int,
    preset: str,
    out_result,
    out_model,
    checkpoint=None,
) -> dict:
    """Train ``arch`` on the pooled records; write its result row and final model."""
    loop.set_threads(threads)
    dev = loop.pick_device(device)
    pooled = [load_labelled(p, dev, offset=n_public_classes) for p in party_paths]
    x, y = torch.cat([p[0] for p in pooled]), torch.cat([p[1] for p in pooled])
    x_test, y_test, meta = load_labelled(test_path, dev, offset=n_public_classes)
    task = (n_public_classes, n_public_classes + len(meta["task_classes"]))
    gen = loop.seed_everything(torch_seed(seed, "centralized", scenario, arch))
    model = load_model(model_path, dev, task[1])
    t0 = time.perf_counter()
    fp = fingerprint("centralized", scenario, arch, [str(p) for p in party_paths], settings, seed)
    train_supervised(
        model,
        optimizer(model, settings.lr),
        x,
        y,
        settings,
        gen,
        name=f"centralized {arch}",
        evaluate=lambda m: {"test_accuracy": loop.accuracy(m, x_test, y_test, outputs=task)},
        log_every=max(1, settings.epochs // 10),
        checkpoint=checkpoint,
        fingerprint=fp,
    )
    save_model(model, out_model, scenario=scenario)
    row = result_row(
        NO_PRIVACY,
        method="Centralized",
        scenario=scenario,
        public_dataset=None,
        private_dataset=meta["dataset"],
        mechanism="none",
        delta_vacuous=True,
        accuracy=loop.accuracy(model, x_test, y_test, outputs=task),
        accuracy_any_class=loop.accuracy(model, x_test, y_test),
        n=len(x),
        k=len(x),
        parties=len(party_paths),
        test_n=len(x_test),
        arch=arch,
        epochs=settings.epochs,
        wall_seconds=time.perf_counter() - t0,
        **loop.where(dev),
        seed=seed,
        preset=preset,
    )
    write_json(row, out_result)
    clear_checkpoint(checkpoint)
    return row
