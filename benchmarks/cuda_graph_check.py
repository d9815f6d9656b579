"""CUDA-graph steps against eager steps (issue 56): one FedMD party trained both ways on one device, from the
same weights and batch orders, and what they differ by.

Three rounds of a party's schedule: its own records at batch 32, then the aggregate on a new public subset at
batch 256 (soft labels), both with a remainder batch; after round 1 the optimizer is restored from its
checkpoint (``loop.portable_state``), which must re-capture.  Dropout 0 and deterministic cuDNN, so what is left
is float rounding (capturable Adam computes its bias correction on the GPU).  Prints the largest difference in
weights, and apart in BatchNorm's running statistics, each relative to the largest change training made in
them (floating tensors; BatchNorm's step counters must be equal), the per-phase losses, images
per second of each arm (after an untimed start-up run), the captures taken and (CUDA) the peak reserved memory;
the last line says PASS (captures taken, difference within the limit) or FAIL.

    python3 benchmarks/cuda_graph_check.py --device cuda                  # on a GPU: captured against eager
    .venv/bin/python benchmarks/cuda_graph_check.py --arch cnn2-8-16-d0.0   # on a CPU: the static path, exact
"""

from __future__ import annotations

import argparse
import copy
import time

import torch

from pipelib.train import loop, models

CLASSES = 16


def data(shape, n: int, seed: int, soft: bool, device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = loop.to_device(torch.randint(0, 256, (n, *shape[1:], shape[0]), generator=g, dtype=torch.uint8).numpy(), device)
    y = torch.softmax(torch.randn(n, CLASSES, generator=g), 1) if soft else torch.randint(0, CLASSES, (n,), generator=g)
    return x, y.to(device)


def train(mode: str, device, arch: str, shape, rounds: int) -> tuple[dict, dict, list[float], float, int]:
    """(initial state, final state: weights and BatchNorm statistics, loss of every phase, images per second,
    captures) of one party trained with graphs ``mode``."""
    loop.set_graphs(mode, device)
    torch.manual_seed(0)
    model = loop.prepare(models.build(arch, shape, CLASSES), device)
    first = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    opt = models.optimizer(model, 1e-3)
    own = data(shape, 32 * 6 + 7, 1, False, device)
    digest = loop.Objective(loop.soft_ce)
    gen = torch.Generator().manual_seed(0)
    losses, images = [], 0
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for r in range(rounds):
        losses.append(loop.fit(model, opt, own, loop.CROSS_ENTROPY, 1, 32, gen, graph=True)["loss"])
        public = data(shape, 256 * 4 + 40, 100 + r, True, device)  # a new subset each round, same shape
        losses.append(loop.fit(model, opt, public, digest, 1, 256, gen, graph=True)["loss"])
        images += len(own[0]) + len(public[0])
        if r == 1:  # a checkpoint's restore: new optimizer tensors, captured anew
            opt.load_state_dict(copy.deepcopy(loop.portable_state(opt)))
    if device.type == "cuda":
        torch.cuda.synchronize()
    rate = images / (time.perf_counter() - t0)
    captures = loop._GRAPHS.get("captures", 0)
    loop.set_graphs("off", device)
    last = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return first, last, losses, rate, captures


def compare(first: dict, eager: dict, graphed: dict, buffers: set[str]) -> tuple[float, float, bool]:
    """(largest weight difference / largest weight change in training, the same for the BatchNorm running
    statistics, whether the integer counters are equal): over floating tensors only, weights and statistics
    apart, so a counter's growth (one a step) cannot widen what the weights are allowed to differ by."""

    def ratio(keys) -> float:
        moved = max((float((eager[k] - first[k]).abs().max()) for k in keys), default=0.0)
        diff = max((float((eager[k] - graphed[k]).abs().max()) for k in keys), default=0.0)
        return diff / moved if moved > 0 else (0.0 if diff == 0 else float("inf"))

    floats = [k for k in eager if eager[k].is_floating_point()]
    counters = [k for k in eager if not eager[k].is_floating_point()]
    return (
        ratio([k for k in floats if k not in buffers]),
        ratio([k for k in floats if k in buffers]),
        all(torch.equal(eager[k], graphed[k]) for k in counters),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--arch", default="cnn2-128-256-d0.0", help="a FedMD CNN, dropout 0 (default: party 0's)")
    ap.add_argument("--channels", type=int, default=1, choices=(1, 3), help="1: 28x28 (FEMNIST), 3: 32x32")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=1e-2, help="largest difference / largest change (GPU)")
    args = ap.parse_args()
    device = torch.device(args.device)
    shape = (1, 28, 28) if args.channels == 1 else (3, 32, 32)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    captured = "auto" if device.type == "cuda" else "static"
    train("off", device, args.arch, shape, 1)  # untimed: CUDA, cuBLAS and cuDNN start-up
    first, eager, l_eager, r_eager, _ = train("off", device, args.arch, shape, args.rounds)
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    _, graphed, l_graph, r_graph, captures = train(captured, device, args.arch, shape, args.rounds)
    buffers = {k for k, _ in models.build(args.arch, shape, CLASSES).named_buffers()}
    weights, statistics, counters = compare(first, eager, graphed, buffers)
    print(f"device {loop.hardware(device)}, torch {torch.__version__}, {args.arch} on {'x'.join(map(str, shape))}")
    print(f"eager losses:    {' '.join(f'{v:.5f}' for v in l_eager)}")
    print(f"{captured:>6} losses:  {' '.join(f'{v:.5f}' for v in l_graph)}")
    print(f"img/s: eager {r_eager:,.0f}, {captured} {r_graph:,.0f} ({r_graph / r_eager:.2f}x; captures included)")
    if device.type == "cuda":
        print(f"peak reserved GPU memory of the captured arm: {torch.cuda.max_memory_reserved(device) / 2**30:.2f} GiB")
    print(f"captures: {captures} (a batch size per phase, and again after the restore)")
    limit = args.tolerance if device.type == "cuda" else 0.0  # the static path runs the same kernels
    print(
        f"largest difference / largest change in training: weights {weights:.3g}, BatchNorm statistics "
        f"{statistics:.3g} (limit {limit:g}); BatchNorm step counters {'equal' if counters else 'DIFFER'}"
    )
    print("PASS" if captures >= 4 and max(weights, statistics) <= limit and counters else "FAIL")


if __name__ == "__main__":
    main()
