"""PATE's own teachers on a few shards: how good one CNN trained from scratch on its shard gets, by model and
epochs, and how fast (the choice of ``ldpdl.pate.scratch`` for a preset; an evaluation, not part of the DAG:
it reads the private pool).

Deals the scenario's pool into the ``T<teachers>`` shards exactly as the workflow does, trains the first
``--shards`` of them (``pipelib.methods.teachers.train_cnn_teachers``, one vmap group, one thread) for each
``ARCH:EPOCHS`` given, and prints per setting: the teachers' accuracy on their own records, one teacher's
accuracy on the first ``--test`` test images (mean and worst), the plurality vote of these teachers, the
time and the image-passes per second.

    .venv/bin/python benchmarks/pate_teachers_probe.py results/reduced ldpdl_mnist fedcnn-16-32-128:40
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from pipelib.io import read_images
from pipelib.methods.ldpdl import owner_records
from pipelib.methods.teachers import cnn_votes, train_cnn_teachers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="a preset's results folder (results/reduced)")
    parser.add_argument("scenario", help="an LDP-DL scenario with its partitions made (ldpdl_mnist)")
    parser.add_argument("settings", nargs="+", help="ARCH:EPOCHS, e.g. fedcnn-16-32-128:40")
    parser.add_argument("--teachers", type=int, default=250, help="PATE's teachers: the pool's shards")
    parser.add_argument("--shards", type=int, default=20, help="how many of them to train")
    parser.add_argument("--test", type=int, default=2000, help="test images to score")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    root = args.results / "partitions" / args.scenario
    parties = sorted(root.glob("party-*.parquet"), key=lambda p: int(p.stem.split("-")[1]))
    if not parties:
        raise SystemExit(f"no party tables under {root}: make the scenario's partitions first")
    tables = [read_images(p) for p in parties]  # in party order, as the teachers' job concatenates them
    labels = np.concatenate([f["label"].to_numpy() for f, _, _ in tables]).astype(np.int64)
    images = np.concatenate([im for _, im, _ in tables])
    k = len(tables[0][2]["task_classes"])
    sets = owner_records(f"T{args.teachers}", [len(f) for f, _, _ in tables], 0, args.seed, args.scenario)
    sets = sets[: args.shards]
    frame, test_images, _ = read_images(root / "test.parquet")
    truth, test_images = frame["label"].to_numpy()[: args.test], test_images[: args.test]
    for spec in args.settings:
        arch, epochs = spec.rsplit(":", 1)
        settings = {"arch": arch, "epochs": int(epochs), "batch": args.batch, "lr": args.lr, "group": len(sets)}
        t0 = time.perf_counter()
        params, fit = train_cnn_teachers(images, labels, sets, k, settings, args.seed, "probe")
        took = time.perf_counter() - t0
        votes = cnn_votes(params, arch, k, test_images)
        one = (votes == truth[None]).mean(1)
        vote = np.array([np.bincount(v, minlength=k).argmax() for v in votes.T])
        passes = sum(map(len, sets)) * int(epochs)
        print(
            f"{args.scenario} {arch} x {epochs} epochs, {len(sets)} shards of {len(sets[0])}: own records "
            f"{fit.mean():.3f}, one teacher {one.mean():.3f} (worst {one.min():.3f}), vote of {len(sets)} "
            f"{(vote == truth).mean():.3f}; {took:.0f} s, {passes / took:,.0f} img/s",
            flush=True,
        )


if __name__ == "__main__":
    main()
