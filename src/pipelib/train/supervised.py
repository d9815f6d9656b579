"""One helper for every stage that trains a model on labelled images (pre-training, the centralized
baseline, students, teachers): epochs through :func:`pipelib.train.loop.fit`, resumable after a kill,
evaluated and logged as it goes; and the model files every training stage keeps as its output.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from torch import nn

from ..io import atomic_path, load_torch
from .checkpoint import resumable_epochs
from .loop import fit, hard_ce, prepare, progress
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


def train_supervised(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    settings: TrainSettings,
    gen: torch.Generator,
    *,
    name: str,
    loss=hard_ce,
    evaluate=None,
    log_every: int = 1,
    checkpoint=None,
    fingerprint: str = "",
    prep=None,
) -> list[dict]:
    """Train for ``settings.epochs`` epochs; returns one history row per epoch.

    ``evaluate(model) -> dict`` (e.g. test accuracy) runs after every ``log_every``-th epoch and the last;
    a log line per such epoch.  With ``checkpoint``, a killed job resumes after its last finished epoch.
    ``prep`` maps a batch of x to the model's input (default: uint8 pixels to [-1, 1]).
    """
    history: list[dict] = []
    with progress(settings.epochs * len(x), name):
        for epoch in resumable_epochs(settings.epochs, checkpoint, fingerprint, model, opt, gen, history):
            stats = fit(model, opt, x, y, loss, 1, settings.batch, gen, prep)
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
