"""One helper for every stage that trains a model on labelled images (pre-training, the centralized
baseline, students, teachers): epochs through :func:`pipelib.train.loop.fit`, resumable after a kill,
evaluated and logged as it goes; and the model files every training stage keeps as its output.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from ..io import atomic_path
from .checkpoint import NO_RESUME, Resume, load_torch, resumable_epochs
from .loop import CROSS_ENTROPY, Objective, fit, prepare, progress
from .models import build

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainSettings:
    """How a stage trains a model: epochs, mini-batch size and Adam's learning rate."""

    epochs: int
    batch: int
    lr: float

    @classmethod
    def from_config(cls, cfg: dict, lr: float | None = None) -> "TrainSettings":
        """From a config section with epochs and batch (and lr, unless given)."""
        return cls(int(cfg["epochs"]), int(cfg["batch"]), float(cfg["lr"] if lr is None else lr))


@dataclass(frozen=True)
class Monitor:
    """How a training run reports: ``name`` (log lines and progress) and ``evaluate(model) -> dict``
    (e.g. test accuracy), run after every ``every``-th epoch and the last, with a log line each."""

    name: str
    evaluate: Callable | None = None
    every: int = 1


def train_supervised(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    data: tuple[torch.Tensor, torch.Tensor],
    settings: TrainSettings,
    gen: torch.Generator,
    monitor: Monitor,
    *,
    objective: Objective = CROSS_ENTROPY,
    resume: Resume = NO_RESUME,
) -> list[dict]:
    """Train on ``data`` = (x, y) for ``settings.epochs`` epochs minimising ``objective``; returns one
    history row per epoch.  With a ``resume`` path, a killed job resumes after its last finished epoch."""
    name, evaluate, log_every = monitor.name, monitor.evaluate, monitor.every
    history: list[dict] = []
    with progress(settings.epochs * len(data[0]), name):
        for epoch in resumable_epochs(settings.epochs, resume, model, opt, gen, history):
            stats = fit(model, opt, data, objective, 1, settings.batch, gen)
            row = {"epoch": epoch + 1, "loss": stats["loss"], "img_per_s": stats["img_per_s"]}
            if (epoch + 1) % max(1, log_every) == 0 or epoch + 1 == settings.epochs:
                if evaluate is not None:
                    row.update(evaluate(model))
                extra = "".join(f", {k.replace('_', ' ')} {v:.4f}" for k, v in row.items() if k not in row_keys)
                log.info(
                    "%s epoch %d/%d: loss %.4f%s (%.0f img/s)",
                    name,
                    epoch + 1,
                    settings.epochs,
                    stats["loss"],
                    extra,
                    stats["img_per_s"],
                )
            history.append(row)
    return history


row_keys = ("epoch", "loss", "img_per_s")


def save_state(path, spec: dict, model: nn.Module, **meta) -> None:
    """Atomically write a model file: how to rebuild it (``spec``), its weights (on the CPU) and ``meta``."""
    state = {**spec, "state_dict": {k: v.cpu() for k, v in model.state_dict().items()}, **meta}
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def save_model(model: nn.Module, path, **meta) -> None:
    """Write a FedMD CNN (pre-trained models, party models, centralized baselines, students)."""
    save_state(path, {"arch": model.arch.name, "in_shape": model.in_shape, "n_classes": model.n_classes}, model, **meta)


def load_model(path, device, n_classes: int | None = None) -> nn.Module:
    """A FedMD CNN from a model file, on ``device`` (channels-last)."""
    return model_from_state(load_torch(path), device, n_classes, where=str(path))


def model_from_state(state: dict, device, n_classes: int | None = None, where: str = "the model") -> nn.Module:
    """A model from its saved state ({arch, in_shape, n_classes, state_dict}), on ``device``."""
    if n_classes is not None and state["n_classes"] != n_classes:
        raise ValueError(f"{where} has {state['n_classes']} outputs, the task needs {n_classes}")
    model = build(state["arch"], state["in_shape"], state["n_classes"])
    model.load_state_dict(state["state_dict"])
    return prepare(model, device)
