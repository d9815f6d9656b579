"""The one training loop: supervised epochs over device-resident uint8 tensors.

Every model in the project (pre-training, party training, FedMD digest/revisit, centralized
baseline, encoders, students) trains through :func:`fit`.  Data lives on the device as uint8 NCHW tensors
and mini-batches are gathered by index, so there is no per-sample Python DataLoader on the hot path;
pixels are scaled to [-1, 1] per batch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..logs import JOB, console
from ..vocab import PRECISIONS


def pick_device(setting: str = "auto") -> torch.device:
    """``auto`` -> CUDA when present, else CPU; ``cpu`` / ``cuda`` force one (``cuda`` without a GPU is an error)."""
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if setting == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("config asks for device: cuda but torch sees no CUDA GPU; use device: auto or cpu")
    return torch.device(setting)


def hardware(device) -> str:
    """What a job ran on, for reports: the GPU's name, or the CPU model and the threads the job used."""
    device = torch.device(device)
    if device.type == "cuda":
        return f"GPU: {torch.cuda.get_device_name(device)}"
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return f"CPU: {model}, {torch.get_num_threads()} thread(s) of {os.cpu_count()} cores"


def where(device) -> dict:
    """The result-row columns that say where and how a job ran: ``device``, ``hardware`` and the training
    ``precision`` it ran at (:func:`set_precision`)."""
    return {"device": str(device), "hardware": hardware(device), "precision": _PRECISION["name"]}


_PRECISION = {"name": "fp32", "device_type": "cpu"}


def bf16_supported(device) -> bool:
    """Whether ``device`` computes in bfloat16 natively: a CUDA GPU that supports it, or a CPU whose oneDNN
    has bf16 kernels (AVX-512 BF16 / AMX); elsewhere bf16 would be emulated and slower than fp32."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def set_precision(precision: str, device) -> str:
    """Set the job's training precision and return the one it runs at: ``fp32``, or ``bf16``: the forward
    pass and loss of every training step under bfloat16 autocast (CUDA's AMP in bf16, which needs no loss
    scaling; oneDNN's bf16 on a CPU), weights, gradients and optimizer state staying float32.  ``bf16`` on a
    device without native bf16 falls back to fp32 (logged), and the result row records ``fp32``."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; allowed: {', '.join(PRECISIONS)}")
    device = torch.device(device)
    if precision == "bf16" and not bf16_supported(device):
        logging.getLogger(__name__).warning("precision bf16: %s has no native bf16, training in fp32", device)
        precision = "fp32"
    _PRECISION.update(name=precision, device_type=device.type)
    return precision


def autocast():
    """The context a training step's forward pass and loss run in (:func:`set_precision`)."""
    if _PRECISION["name"] == "bf16":
        return torch.autocast(_PRECISION["device_type"], dtype=torch.bfloat16)
    return contextlib.nullcontext()


def start(threads: int, device: str = "auto", precision: str = "fp32") -> torch.device:
    """A training job's set-up: its CPU threads, its device and its precision; returns the device."""
    set_threads(threads)
    dev = pick_device(device)
    set_precision(precision, dev)
    return dev


def set_threads(threads: int | None = None) -> int:
    """Size torch's CPU thread pool from the job's cores (Snakemake threads / SLURM cpus-per-task)."""
    n = threads or int(os.environ.get("SLURM_CPUS_PER_TASK", 0)) or len(os.sched_getaffinity(0))
    torch.set_num_threads(max(1, n))
    return torch.get_num_threads()


def seed_everything(seed: int) -> torch.Generator:
    """Seed torch's global RNG (dropout, init) and return a CPU generator for shuffling."""
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def to_device(images: np.ndarray, device) -> torch.Tensor:
    """(N, H, W, C) uint8 numpy -> (N, C, H, W) uint8 tensor on ``device``, stored channels-last.

    The permuted view of NHWC memory *is* PyTorch's channels_last layout, which oneDNN/cuDNN
    convolutions prefer (1.4-1.8x faster training on CPU here); models are put in the same layout
    by :func:`prepare`.
    """
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).to(device)


def prepare(model: nn.Module, device) -> nn.Module:
    """Move a model to ``device`` in channels-last layout."""
    return model.to(device=device, memory_format=torch.channels_last)


def scale(x_u8: torch.Tensor) -> torch.Tensor:
    """uint8 pixels -> float32 in [-1, 1]."""
    return x_u8.float().mul_(2.0 / 255.0).sub_(1.0)


def hard_ce(logits, target):
    return F.cross_entropy(logits, target)


def soft_ce(logits, target):
    """Cross-entropy against a probability vector (soft labels)."""
    return -(target * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def l1(logits, target):
    """FedMD's logit matching: mean absolute error between logits."""
    return (logits - target).abs().mean()


@dataclass(frozen=True)
class Objective:
    """What one mini-batch step minimises: ``loss(model(prep(x)), y)``.  ``prep`` turns a batch of x
    into the model's input (default :func:`scale`: uint8 pixels)."""

    loss: Callable = hard_ce
    prep: Callable | None = None


CROSS_ENTROPY = Objective()  # hard labels, uint8 pixels


class Progress:
    """A job's progress: image-passes done of its planned total, images per second and an ETA, logged
    (to the job's log and the console) at most every ``every`` seconds, and at the end."""

    def __init__(self, total: float, label: str, every: float | None = None):
        self.total, self.label, self.done = float(total), label, 0
        self.every = every if every is not None else float(os.environ.get("PIPELIB_PROGRESS_SECONDS", 30))
        self.t0 = self.last = time.perf_counter()

    def advance(self, images: int) -> None:
        self.done += images
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            self.report(now)

    def report(self, now: float | None = None, final: bool = False) -> str:

        seconds = (now or time.perf_counter()) - self.t0
        rate = self.done / seconds if seconds > 0 else float("nan")
        left = max(self.total - self.done, 0) / rate if rate > 0 else float("nan")
        share = f"{100 * self.done / self.total:.0f} % of " if self.total else ""
        eta = "done" if final else f"ETA {_duration(left)}"
        line = f"{self.label}: {share}{self.total:,.0f} image-passes, {rate:,.0f} img/s, {eta}"
        logging.getLogger("pipelib.progress").info(line)
        console(f"{JOB or self.label}: {line}")
        return line


def _duration(seconds: float) -> str:
    if seconds != seconds:
        return "unknown"
    return (
        f"{seconds:.0f} s"
        if seconds < 90
        else f"{seconds / 60:.0f} min"
        if seconds < 5400
        else f"{seconds / 3600:.1f} h"
    )


_PROGRESS: Progress | None = None


@contextlib.contextmanager
def progress(total: float, label: str, every: float | None = None):
    """Count every training batch of the block towards ``total`` image-passes (see :class:`Progress`).
    Inside an outer progress (a FedMD row around its parties' training) the outer one keeps counting."""
    global _PROGRESS
    if _PROGRESS is not None:
        yield _PROGRESS
        return
    _PROGRESS = Progress(total, label, every)
    try:
        yield _PROGRESS
        _PROGRESS.report(final=True)
    finally:
        _PROGRESS = None


def advance(images: int) -> None:
    """Count ``images`` image-passes towards the running :func:`progress` (if any)."""
    if _PROGRESS is not None:
        _PROGRESS.advance(images)


def fit(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    data: tuple[torch.Tensor, torch.Tensor],
    objective: Objective,
    epochs: int,
    batch: int,
    gen: torch.Generator,
) -> dict:
    """Train ``model`` for ``epochs`` passes over ``data`` = (x, y) in shuffled mini-batches, minimising
    ``objective``; returns loss and speed."""
    (x, y), loss_fn = data, objective.loss
    prep = scale if objective.prep is None else objective.prep
    model.train()
    n, total, steps, t0 = len(x), 0.0, 0, time.perf_counter()
    starts = list(range(0, n, batch))
    if len(starts) > 1 and n - starts[-1] == 1:
        starts.pop()  # fold a trailing single example into the previous batch (BatchNorm needs 2)
    bounds = list(zip(starts, starts[1:] + [n]))
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen).to(x.device)
        for i, j in bounds:
            idx = order[i:j]
            with autocast():
                loss = loss_fn(model(prep(x[idx])), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()
            steps += 1
            advance(j - i)
    seconds = time.perf_counter() - t0
    return {
        "loss": float(total / max(steps, 1)),
        "images": n * epochs,
        "seconds": seconds,
        "img_per_s": n * epochs / seconds if seconds > 0 else float("nan"),
    }


@torch.no_grad()
def predict(model: nn.Module, x: torch.Tensor, batch: int = 1024) -> torch.Tensor:
    """Logits of ``model`` on ``x`` (eval mode), as a float32 tensor on x's device."""
    model.eval()
    return (
        torch.cat([model(scale(x[i : i + batch])) for i in range(0, len(x), batch)])
        if len(x)
        else torch.zeros(0, model.n_classes, device=x.device)
    )


def accuracy(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1024, outputs: tuple[int, int] | None = None
) -> float:
    """Top-1 accuracy; with ``outputs=(start, stop)`` the argmax is taken over those outputs only.

    FedMD models have public and private-task outputs; the private task's accuracy is the argmax over
    the task's outputs (its test images are all task classes).  FedMD's own code took the argmax over
    all outputs, which also counts a test image as wrong when a public class wins; call without
    ``outputs`` for that figure.
    """
    return top1(predict(model, x, batch), y, outputs)


def top1(logits: torch.Tensor, y: torch.Tensor, outputs: tuple[int, int] | None = None) -> float:
    """Top-1 accuracy of ``logits`` (argmax over ``outputs=(start, stop)`` when given): one forward pass
    can then score several ways (see :func:`accuracy`)."""
    if outputs is None:
        return float((logits.argmax(1) == y).float().mean())
    start, stop = outputs
    return float((logits[:, start:stop].argmax(1) + start == y).float().mean())
