"""Training throughput: pipelib's party training against a plain minimal torch loop, on one device.

Prints images per second for the same model, batch size and device in one run:
  * plain loop: pre-scaled float data, sequential slices, no shuffling: the ceiling (measured in the
    default NCHW layout and in channels-last; the faster one is the ceiling);
  * pipelib ``train.loop.fit`` (what every party, pre-training and student job runs): uint8 data on the
    device, shuffled index batches, scaled per batch;
  * N parties trained by ``fedmd.Party.train_own`` against N sequential plain loops.

    .venv/bin/python benchmarks/train_speed.py --arch cnn2-32-64-d0.2 --data mnist --batch 32
    .venv/bin/python benchmarks/train_speed.py --device cuda --arch cnn2-128-256-d0.2 --batch 256
"""

from __future__ import annotations

import argparse
import time

import torch

from pipelib.methods import fedmd
from pipelib.train import loop as train
from pipelib.train import models

SHAPES = {"mnist": (1, 28, 28), "cifar": (3, 32, 32)}


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def plain_loop(model, x, y, batch, epochs, device):
    """A minimal training loop: float batches sliced in order, Adam, cross-entropy."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    sync(device)
    t0 = time.perf_counter()
    for _ in range(epochs):
        for i in range(0, len(x), batch):
            loss = torch.nn.functional.cross_entropy(model(x[i : i + batch]), y[i : i + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
    sync(device)
    return len(x) * epochs / (time.perf_counter() - t0)


def ours(model, x_u8, y, batch, epochs, device):
    opt = models.optimizer(model, 1e-3)
    gen = torch.Generator().manual_seed(0)
    sync(device)
    t0 = time.perf_counter()
    train.fit(model, opt, (x_u8, y), train.CROSS_ENTROPY, epochs, batch, gen)
    sync(device)
    return len(x_u8) * epochs / (time.perf_counter() - t0)


def parties_ours(archs, shape, x_u8, y, batch, epochs, device):
    parties = []
    for i, arch in enumerate(archs):
        m = train.prepare(models.build(arch, shape, 16), device)
        parties.append(
            fedmd.Party(i, m, models.optimizer(m, 1e-3), (x_u8, y), "softmax", torch.Generator().manual_seed(i))
        )
    sync(device)
    t0 = time.perf_counter()
    for p in parties:
        p.train_own(epochs, batch)
    sync(device)
    return len(archs) * len(x_u8) * epochs / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="cnn2-32-64-d0.2")
    ap.add_argument("--data", choices=SHAPES, default="mnist")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--images", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--parties", type=int, default=4)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: all the process may use)")
    ap.add_argument("--repeat", type=int, default=3, help="timed repeats; the best is reported")
    args = ap.parse_args()

    threads = train.set_threads(args.threads or None)
    device = train.pick_device(args.device)
    shape = SHAPES[args.data]
    g = torch.Generator().manual_seed(0)
    x_u8 = torch.randint(0, 256, (args.images, *shape), generator=g, dtype=torch.uint8)
    x_u8 = train.to_device(x_u8.permute(0, 2, 3, 1).numpy(), device)  # channels-last uint8, as the stages load it
    y = torch.randint(0, 16, (args.images,), generator=g).to(device)
    x_nchw = train.scale(x_u8.contiguous())  # what a plain loop would hold: float, default layout
    x_cl = train.scale(x_u8.clone())  # float, channels-last

    def fresh(memory_format=torch.contiguous_format):
        torch.manual_seed(0)
        return models.build(args.arch, shape, 16).to(device=device, memory_format=memory_format)

    # warm-up (oneDNN / cuDNN kernel selection)
    plain_loop(fresh(), x_nchw[:256], y[:256], args.batch, 1, device)
    ours(train.prepare(fresh(), device), x_u8[:256], y[:256], args.batch, 1, device)

    plain_nchw = max(plain_loop(fresh(), x_nchw, y, args.batch, args.epochs, device) for _ in range(args.repeat))
    plain_cl = max(
        plain_loop(fresh(torch.channels_last), x_cl, y, args.batch, args.epochs, device) for _ in range(args.repeat)
    )
    ceiling = max(plain_nchw, plain_cl)
    our = max(
        ours(train.prepare(fresh(), device), x_u8, y, args.batch, args.epochs, device) for _ in range(args.repeat)
    )
    n = args.parties
    par_ours = max(
        parties_ours([args.arch] * n, shape, x_u8, y, args.batch, args.epochs, device) for _ in range(args.repeat)
    )
    best_fmt, best_x = (torch.channels_last, x_cl) if plain_cl >= plain_nchw else (torch.contiguous_format, x_nchw)
    par_plain = max(
        n
        * args.images
        * args.epochs
        / sum(
            args.images * args.epochs / plain_loop(fresh(best_fmt), best_x, y, args.batch, args.epochs, device)
            for _ in range(n)
        )
        for _ in range(args.repeat)
    )

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu, {threads} threads"
    print(f"device: {name}; torch {torch.__version__}")
    print(
        f"model {args.arch} on {args.data} {shape}, batch {args.batch}, {args.images} images x {args.epochs} "
        f"epoch(s), best of {args.repeat}"
    )
    print(f"  plain loop, NCHW float data           {plain_nchw:9.0f} img/s")
    print(f"  plain loop, channels-last float data  {plain_cl:9.0f} img/s   (ceiling = the faster plain loop)")
    print(f"  pipelib train.fit                     {our:9.0f} img/s   {our / ceiling:.2f} of ceiling")
    print(f"  {n} parties, pipelib Party.train_own   {par_ours:9.0f} img/s")
    print(
        f"  {n} sequential plain loops             {par_plain:9.0f} img/s   pipelib/plain = {par_ours / par_plain:.2f}"
    )


if __name__ == "__main__":
    main()
