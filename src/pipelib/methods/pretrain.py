"""Shared initialization (paper 002): each architecture trained on the labelled public data, once per
(public dataset, architecture), and reused by every FedMD row and party that uses it."""

from __future__ import annotations

import logging

import numpy as np
import torch

from ..data.loaders import load_labelled
from ..io import write_json
from ..seeding import rng, torch_seed
from ..train import loop
from ..train.checkpoint import clear_checkpoint, fingerprint
from ..train.models import build, optimizer
from ..train.supervised import TrainSettings, save_model, train_supervised

log = logging.getLogger(__name__)


def pretrain(
    *,
    arch: str,
    train_path,
    test_path,
    n_classes: int,
    settings: TrainSettings,
    max_images: int,
    seed: int,
    device: str,
    threads: int,
    out_model,
    out_summary,
    checkpoint=None,
) -> dict:
    """Train ``arch`` on the labelled public data; ``max_images`` > 0 uses a seeded subset (reduced presets)."""
    loop.set_threads(threads)
    dev = loop.pick_device(device)
    x, y, meta = load_labelled(train_path, dev)
    if 0 < max_images < len(x):
        keep = torch.from_numpy(np.sort(rng(seed, "pretrain-subset").choice(len(x), max_images, replace=False)))
        x, y = x[keep.to(dev)], y[keep.to(dev)]
    x_test, y_test, _ = load_labelled(test_path, dev)
    gen = loop.seed_everything(torch_seed(seed, "pretrain", arch))
    model = loop.prepare(build(arch, x.shape[1:], n_classes), dev)
    fp = fingerprint("pretrain", arch, str(train_path), n_classes, settings, seed, max_images)
    history = train_supervised(
        model,
        optimizer(model, settings.lr),
        x,
        y,
        settings,
        gen,
        name=f"pretrain {arch}",
        evaluate=lambda m: {"public_test_accuracy": loop.accuracy(m, x_test, y_test)},
        checkpoint=checkpoint,
        fingerprint=fp,
    )
    save_model(model, out_model, public=meta["dataset"], history=history)
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
    write_json(summary, out_summary)
    return summary
