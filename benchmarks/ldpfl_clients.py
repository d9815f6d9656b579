"""LDP-FL's hot path: clients trained per second by our round (torch.func.vmap over a group of clients)
vs a plain per-client loop, same model, data shapes, batches and device, in one run.

Data are random uint8 images of the dataset's shape (speed does not depend on pixel values); every
client holds ``--per-client`` records and trains ``--epochs`` epochs of minibatch SGD (batch
``--batch``) from the same global weights, as in one LDP-FL round.

    .venv/bin/python benchmarks/ldpfl_clients.py                              # MNIST-like, paper's model
    .venv/bin/python benchmarks/ldpfl_clients.py --arch vgg-32-64-128-256 --shape 3 32 32 --per-client 100
    .venv/bin/python benchmarks/ldpfl_clients.py --device cuda --clients 500 --group 100
"""

from __future__ import annotations

import argparse
import time

import torch

from pipelib.train import local_sgd, loop
from pipelib.train.models import build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="fedcnn-32-64-512")
    ap.add_argument("--shape", type=int, nargs=3, default=[1, 28, 28])
    ap.add_argument("--clients", type=int, default=20, help="clients of the round")
    ap.add_argument("--per-client", type=int, default=600, help="records per client")
    ap.add_argument("--batch", type=int, default=10, help="B (ldpfl.batch)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--group", type=int, nargs="+", default=[10, 20], help="clients per vmap call")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()

    threads = loop.set_threads(args.threads)
    dev = loop.pick_device(args.device)
    torch.manual_seed(0)
    model = build(args.arch, tuple(args.shape), 10).to(dev)
    start = {k: v.detach().clone() for k, v in model.named_parameters()}
    g = torch.Generator().manual_seed(0)
    clients = [
        local_sgd.Client(
            i,
            torch.randint(0, 256, (args.per_client, *args.shape), generator=g, dtype=torch.uint8).to(dev),
            torch.randint(0, 10, (args.per_client,), generator=g).to(dev),
        )
        for i in range(args.clients)
    ]
    orders = local_sgd.shuffles(0, "bench", 1, clients, args.epochs)
    print(
        f"{args.arch}, {args.clients} clients x {args.per_client} records, {args.epochs} epoch(s), batch "
        f"{args.batch}; {loop.hardware(dev)}, torch {torch.__version__}"
    )

    def timed(mode: str, group: int) -> float:
        trainer = local_sgd.LocalSGD(model, 0.01, args.epochs, args.batch, mode)
        trainer.train(start, clients[:group], orders[:group])  # warm-up (allocator, kernels)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(0, args.clients, group):
            trainer.train(start, clients[i : i + group], orders[i : i + group])
        if dev.type == "cuda":
            torch.cuda.synchronize()
        return args.clients / (time.perf_counter() - t0)

    base = timed("loop", 1)
    print(f"  per-client loop          {base:8.2f} clients/s")
    for group in args.group:
        rate = timed("vmap", group)
        print(f"  vmap, {group:4d} per call    {rate:8.2f} clients/s  ({rate / base:.2f}x the loop)")
    print(f"  ({threads} CPU thread(s))")


if __name__ == "__main__":
    main()
