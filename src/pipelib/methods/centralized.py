"""The centralized baseline (paper 002): one architecture trained on all parties' records pooled, from
the shared pre-trained initialization; the utility upper bound, with no privacy."""

from __future__ import annotations

import logging
import time

import torch

from ..data.loaders import load_labelled
from ..io import write_json
from ..job import Job
from ..privacy import NO_PRIVACY
from ..schema import result_row
from ..seeding import torch_seed
from ..train import loop
from ..train.checkpoint import Resume, clear_checkpoint, fingerprint
from ..train.models import optimizer
from ..train.supervised import Monitor, TrainSettings, load_model, save_model, train_supervised

log = logging.getLogger(__name__)


def centralized(job: Job, settings: TrainSettings, *, n_public_classes: int) -> dict:
    """Train the job's ``arch`` on the pooled records (input ``parties``) from the pre-trained input
    ``model``; write its result row and final model (outputs ``result`` and ``model``)."""
    scenario, arch, seed, checkpoint = job.scenario, job["arch"], job.seed, job.checkpoint
    party_paths = job.input["parties"]
    dev = loop.start(job.threads, job.device, job.precision)
    pooled = [load_labelled(p, dev, offset=n_public_classes) for p in party_paths]
    x, y = torch.cat([p[0] for p in pooled]), torch.cat([p[1] for p in pooled])
    x_test, y_test, meta = load_labelled(job.input["test"], dev, offset=n_public_classes)
    task = (n_public_classes, n_public_classes + len(meta["task_classes"]))
    gen = loop.seed_everything(torch_seed(seed, "centralized", scenario, arch))
    model = load_model(job.input["model"], dev, task[1])
    t0 = time.perf_counter()
    fp = fingerprint(job.code, "centralized", scenario, arch, [str(p) for p in party_paths], settings, seed)
    evaluate = lambda m: {"test_accuracy": loop.accuracy(m, x_test, y_test, outputs=task)}  # noqa: E731
    monitor = Monitor(f"centralized {arch}", evaluate, every=max(1, settings.epochs // 10))
    train_supervised(
        model, optimizer(model, settings.lr), (x, y), settings, gen, monitor, resume=Resume(checkpoint, fp)
    )
    save_model(model, job.output["model"], scenario=scenario)
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
        preset=job.preset,
    )
    write_json(row, job.output["result"])
    clear_checkpoint(checkpoint)
    return row
