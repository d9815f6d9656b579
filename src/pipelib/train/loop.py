"""The one training loop: supervised epochs over device-resident uint8 tensors.

Every model in the project (pre-training, party training, FedMD digest/revisit, centralized
baseline, encoders, students) trains through :func:`fit`.  Data lives on the device as uint8 NCHW tensors
and mini-batches are gathered by index, so there is no per-sample Python DataLoader on the hot path;
pixels are scaled to [-1, 1] per batch.  On a CUDA GPU a caller may ask for its steps to be captured as CUDA
graphs (:class:`CapturedSteps`): a step of a small CNN at a small batch is bound by Python and kernel launches,
not by the GPU's arithmetic (docs/benchmarks.md), and a replayed graph pays one launch for the whole step.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import weakref
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
    ``precision`` it ran at (:func:`set_precision`); ``hardware`` notes steps replayed as CUDA graphs."""
    graphs = ", training steps replayed as CUDA graphs" if _GRAPHS.get("replayed") else ""
    return {"device": str(device), "hardware": hardware(device) + graphs, "precision": _PRECISION["name"]}


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
    if _PRECISION["name"] == "bf16":  # a captured step must not reuse casts cached outside its graph
        cache = not (_GRAPHS["mode"] == "cuda" and torch.cuda.is_current_stream_capturing())
        return torch.autocast(_PRECISION["device_type"], dtype=torch.bfloat16, cache_enabled=cache)
    return contextlib.nullcontext()


def start(threads: int, device: str = "auto", precision: str = "fp32") -> torch.device:
    """A training job's set-up: its CPU threads, its device, its precision and whether its steps may be
    captured as CUDA graphs (:func:`set_graphs`); returns the device."""
    set_threads(threads)
    dev = pick_device(device)
    set_precision(precision, dev)
    set_graphs(os.environ.get("PIPELIB_CUDA_GRAPHS", "auto"), dev)
    return dev


_GRAPHS: dict = {"mode": "off"}  # and, once captured in this process: the side stream and the memory pool
GRAPH_MODES = ("auto", "off", "static")


def set_graphs(setting: str, device) -> str:
    """Whether ``fit(..., graph=True)`` captures its steps as CUDA graphs (environment ``PIPELIB_CUDA_GRAPHS``):
    ``auto``: on a CUDA device, ``off``: never (the eager steps of every earlier release), ``static``: the
    captured path's buffers and bookkeeping without the capture (tests it on a CPU).  Returns the mode set:
    ``cuda``, ``static`` or ``off``."""
    if setting not in GRAPH_MODES:
        raise ValueError(f"PIPELIB_CUDA_GRAPHS={setting!r}; allowed: {', '.join(GRAPH_MODES)}")
    cuda = torch.device(device).type == "cuda"
    mode = "static" if setting == "static" else "cuda" if cuda and setting == "auto" else "off"
    _GRAPHS.update(mode=mode, replayed=False, captures=0)
    return mode


def _capture_context() -> tuple:
    """(side stream, memory pool) shared by every capture of the process: one stream keeps one cuBLAS
    workspace; one pool holds the largest step's memory, not the sum over graphs.  Safe although parties'
    graphs replay in any order: weights, buffers, optimizer state and the static data live outside the pool;
    what a graph keeps in it, its loss and gradients, it writes before reading within its own replay, and
    :func:`fit` reads the loss before another graph replays; graphs never run concurrently."""
    if "pool" not in _GRAPHS:
        _GRAPHS.update(stream=torch.cuda.Stream(), pool=torch.cuda.graph_pool_handle())
    return _GRAPHS["stream"], _GRAPHS["pool"]


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
    graph: bool = False,
) -> dict:
    """Train ``model`` for ``epochs`` passes over ``data`` = (x, y) in shuffled mini-batches, minimising
    ``objective``; returns loss and speed.  ``graph``: the caller's objective can be captured (no host
    synchronisation in its loss or prep): its steps replay CUDA graphs where :func:`set_graphs` allows."""
    x, y = data
    model.train()
    n, total, steps, t0 = len(x), 0.0, 0, time.perf_counter()
    starts = list(range(0, n, batch))
    if len(starts) > 1 and n - starts[-1] == 1:
        starts.pop()  # fold a trailing single example into the previous batch (BatchNorm needs 2)
    bounds = list(zip(starts, starts[1:] + [n]))
    captured = CapturedSteps.of(model, opt, objective, x, y) if graph and _GRAPHS["mode"] != "off" else None
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen).to(x.device)
        for i, j in bounds:
            idx = order[i:j]
            if captured is not None:  # a full batch replays its graph; the epoch's remainder runs eagerly
                loss = captured.step(idx) if j - i == batch else captured.eager(idx)
            else:
                opt.zero_grad(set_to_none=True)
                loss = train_step(model, opt, objective, (x, y), idx)
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


def train_step(model: nn.Module, opt, objective: Objective, data: tuple, idx: torch.Tensor) -> torch.Tensor:
    """One optimizer step on the rows ``idx`` of ``data`` = (x, y), gradients already cleared; returns the loss."""
    x, y = data
    prep = scale if objective.prep is None else objective.prep
    with autocast():
        loss = objective.loss(model(prep(x[idx])), y[idx])
    loss.backward()
    opt.step()
    return loss


class CapturedSteps:
    """The training steps of one (model, optimizer, objective) on data of one shape, as CUDA graphs: one per
    batch size :func:`fit` replays (its full batches), each capturing forward, loss, backward and the
    optimizer's step over static copies of the data, replayed with a new index batch.  The first ``WARMUP``
    steps of a size run eagerly (on a side stream, as CUDA requires before a capture), as does an epoch's
    remainder batch; every step, eager or replayed, is a real step of the same batch order, so a captured run
    trains on what an eager one does.  Adam runs ``capturable`` (its step count on the GPU).  Kept per
    optimizer across :func:`fit` calls (a FedMD party's every round reuses its graphs); an optimizer or model
    whose tensors or settings changed (a restored checkpoint), or another training precision (autocast is
    baked into the kernels), is captured anew.  Mode ``static`` runs the same
    buffers and bookkeeping without capturing (the CPU tests)."""

    WARMUP = 3
    _cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> {data key: CapturedSteps}

    @classmethod
    def of(cls, model, opt, objective, x, y) -> CapturedSteps:
        """The optimizer's captured steps for ``objective`` on data shaped like (x, y), loaded with (x, y)."""
        per_opt = cls._cache.setdefault(opt, {})
        key = (id(model), objective, tuple(x.shape), x.dtype, tuple(y.shape), y.dtype, _PRECISION["name"])
        steps = per_opt.get(key)
        if steps is None or steps.signature != _signature(model, opt):
            steps = per_opt[key] = cls(model, opt, objective, x, y)
        steps.x.copy_(x)
        steps.y.copy_(y)
        return steps

    def __init__(self, model, opt, objective, x, y):
        self.model, self.objective = model, objective
        self._opt = weakref.ref(opt)  # the cache's key: a strong reference would keep it, and its graphs, alive
        self.capture = _GRAPHS["mode"] == "cuda"
        self.x, self.y = torch.empty_like(x), torch.empty_like(y)
        if self.capture:
            _make_capturable(opt)
        self.graphs, self.warm = {}, {}  # batch size -> (graph, index buffer, loss); eager steps taken
        self.signature = _signature(model, opt)

    @property
    def opt(self) -> torch.optim.Optimizer:
        return self._opt()

    def _step(self, idx) -> torch.Tensor:
        return train_step(self.model, self.opt, self.objective, (self.x, self.y), idx)

    def step(self, idx: torch.Tensor) -> torch.Tensor:
        """One training step on the rows ``idx`` of the loaded data, replayed from its size's graph once that
        size has had its warm-up steps; returns its loss."""
        size = len(idx)
        if size not in self.graphs and self.warm.get(size, 0) < self.WARMUP:
            self.warm[size] = self.warm.get(size, 0) + 1
            return self.eager(idx)
        if size not in self.graphs:
            self.graphs[size] = self._captured(size)
            self.signature = _signature(self.model, self.opt)
        graph, index, loss = self.graphs[size]
        index.copy_(idx)
        if graph is None:  # static: the same buffers, run eagerly
            self.opt.zero_grad(set_to_none=True)
            return self._step(index)
        graph.replay()
        _GRAPHS["replayed"] = True
        return loss

    def eager(self, idx: torch.Tensor) -> torch.Tensor:
        """One step run eagerly (a warm-up, an epoch's remainder batch), on the capture's side stream."""
        self.opt.zero_grad(set_to_none=True)
        if not self.capture:
            loss = self._step(idx)
        else:
            side = _capture_context()[0]
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                loss = self._step(idx)
            torch.cuda.current_stream().wait_stream(side)
        self.signature = _signature(self.model, self.opt)  # the optimizer's state exists from its first step
        return loss

    def _captured(self, size: int):
        index = torch.zeros(size, dtype=torch.long, device=self.x.device)
        _GRAPHS["captures"] = _GRAPHS.get("captures", 0) + 1  # static: the slot a capture would fill
        if not self.capture:
            return None, index, None
        graph, (side, pool) = torch.cuda.CUDAGraph(), _capture_context()
        self.opt.zero_grad(set_to_none=True)  # the graph's backward allocates its gradients in the pool
        with torch.cuda.graph(graph, pool=pool, stream=side):
            loss = self._step(index)
        return graph, index, loss


def _signature(model, opt) -> tuple:
    """What a captured graph holds fixed: the storage of the model's parameters and buffers and of the
    optimizer's state (it reads and writes these very tensors), the optimizer's hyperparameters and the
    model's training mode (baked into its kernels)."""
    state = [t for st in opt.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
    storage = tuple(t.data_ptr() for t in (*model.parameters(), *model.buffers(), *state))
    settings = tuple(tuple(sorted((k, repr(v)) for k, v in g.items() if k != "params")) for g in opt.param_groups)
    return storage, settings, model.training


def portable_state(opt: torch.optim.Optimizer) -> dict:
    """An optimizer's state dict as eager steps left it: not ``capturable``, step counts on the CPU, so a
    checkpoint of a run on CUDA graphs resumes on any device and with graphs off (:class:`CapturedSteps`
    makes it capturable again)."""
    state = opt.state_dict()
    groups = [{**g, "capturable": False} if "capturable" in g else g for g in state["param_groups"]]
    steps = {
        k: {n: v.cpu() if n == "step" and isinstance(v, torch.Tensor) else v for n, v in st.items()}
        for k, st in state["state"].items()
    }
    return {"state": steps, "param_groups": groups}


def _make_capturable(opt) -> None:
    """Adam inside a CUDA graph: ``capturable``, its step counts on the parameters' device."""
    if "capturable" not in opt.defaults:  # its host-side work would be skipped on every replay
        raise ValueError(f"{type(opt).__name__} cannot run inside a CUDA graph (no 'capturable' setting)")
    for group in opt.param_groups:
        group["capturable"] = True
        for p in group["params"]:
            st = opt.state.get(p, {})
            if isinstance(st.get("step"), torch.Tensor) and st["step"].device != p.device:
                st["step"] = st["step"].to(device=p.device, dtype=torch.float32)


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
