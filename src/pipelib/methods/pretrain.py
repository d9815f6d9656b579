"""Shared initialization (paper 002): each architecture trained on the labelled public data, once per
(public dataset, architecture), and reused by every FedMD row and party that uses it."""

from __future__ import annotations

import logging

import numpy as np
import torch

from ..data.loaders import load_labelled
from ..io import write_json
from ..job import Job
from ..seeding import rng, torch_seed
from ..train import loop
from ..train.checkpoint import Resume, clear_checkpoint, fingerprint
from ..train.models import build, optimizer
from ..train.supervised import Monitor, TrainSettings, save_model, train_supervised

log = logging.getLogger(__name__)


def pretrain(job: Job, settings: TrainSettings, *, n_classes: int, max_images: int) -> dict:
    """Train the job's ``arch`` on the labelled public data (inputs ``train`` and ``test``); write the
    model and a summary (outputs ``model`` and ``summary``).  ``max_images`` > 0 uses a seeded subset
    (reduced presets)."""
    arch, seed, checkpoint, train_path = job["arch"], job.seed, job.checkpoint, job.input["train"]
    dev = loop.start(job.threads, job.device, job.precision)
    x, y, meta = load_labelled(train_path, dev)
    if 0 < max_images < len(x):
        keep = torch.from_numpy(np.sort(rng(seed, "pretrain-subset").choice(len(x), max_images, replace=False)))
        x, y = x[keep.to(dev)], y[keep.to(dev)]
    x_test, y_test, _ = load_labelled(job.input["test"], dev)
    gen = loop.seed_everything(torch_seed(seed, "pretrain", arch))
    model = loop.prepare(build(arch, x.shape[1:], n_classes), dev)
    fp = fingerprint(job.code, "pretrain", arch, str(train_path), n_classes, settings, seed, max_images)
    history = train_supervised(
        model,
        optimizer(model, settings.lr),
        (x, y),
        settings,
        gen,
        Monitor(f"pretrain {arch}", lambda m: {"public_test_accuracy": loop.accuracy(m, x_test, y_test)}),
        resume=Resume(checkpoint, fp),
    )
    save_model(model, job.output["model"], public=meta["dataset"], history=history)
    clear_checkpoint(checkpoint)
    summary = {
        "arch": arch,
        "public": meta["dataset"],
        "n_classes": n_classes,
        "epochs": settings.epochs,
        "images": len(x),
        "public_test_accuracy": history[-1]["public_test_accuracy"] if history else None,
        "history": history,
        "device": str(dev),
    }
    write_json(summary, job.output["summary"])
    return summary
