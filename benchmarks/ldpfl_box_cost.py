"""What a fixed LDP-FL range costs by itself (issue 51): noise-free federated averaging in which every client
clips each value it uploads to the fixed box [c - r, c + r], with no coin flipped.  Set beside the workflow's
noise-free row (box +-1, rule ldpfl, flmech ``none``) and its fixed-range LDP-FL row (the same box plus Eq. 2's
two-point coins), it splits the fixed row's gap into what the box costs and what the coins cost.  The workflow
now runs the all-tensor arm itself (rule ldpfl, flmech ``clip-c<c>-r<r>``, the same code path,
:class:`pipelib.methods.ldpfl.Server`'s ``clip``); this script is for the arms it does not run: some
layers only (``--clip``), other pixel scalings (``--inputs``), other rounds, fractions or boxes.

The run is paired with the workflow's rows of the same scenario, fraction and rounds: the same clients, initial
model, batch orders and evaluation (the key ``scenario/frac/rounds`` of :func:`pipelib.methods.ldpfl.run_row`).
It reads a results folder that holds the scenario's partition (run the workflow's noise-free row first):

    .venv/bin/python benchmarks/ldpfl_box_cost.py results/reduced ldpfl_fashion --configfile presets/reduced.yaml

prints the global test accuracy after every round and the share of the clipped tensors' averaged values at the
box's edge (``--clip REGEX`` clips only the tensors whose names match: which layers the box costs); ``--out``
writes the rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from pipelib import config as cfgmod
from pipelib.data.loaders import load_labelled
from pipelib.data.partition import every_party
from pipelib.methods.ldpfl import FedAvg, Server, client_mode, initial_model, share_in_box
from pipelib.seeding import torch_seed
from pipelib.settings import LdpflSettings
from pipelib.train import loop
from pipelib.train.local_sgd import Client, LocalSGD

ROOT = Path(__file__).resolve().parents[1]
INPUTS = {
    "pm1": loop.scale,
    "unit": lambda x_u8: x_u8.float().div_(255.0),
    "raw": lambda x_u8: x_u8.float(),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="results folder holding partitions/<scenario>/ and data/")
    parser.add_argument("scenario")
    parser.add_argument("--configfile", nargs="*", default=[], help="config files over config.yaml")
    parser.add_argument("--box", nargs=2, type=float, metavar=("C", "R"), help="default: the dataset's fixed_range")
    parser.add_argument("--rounds", type=int, help="default: the dataset's rounds")
    parser.add_argument("--clip", default=".*", help="clip only the tensors whose names match (default: all)")
    parser.add_argument(
        "--inputs",
        choices=sorted(INPUTS),
        default="pm1",
        help="pixel scaling: pm1 = pipelib's [-1, 1], unit = [0, 1] (torchvision's ToTensor), raw = [0, 255]",
    )
    parser.add_argument("--stop", type=int, help="play only this many rounds (the pairing key keeps --rounds)")
    parser.add_argument("--fraction", type=float, help="clients per round (default: ldpfl.fraction, Table 1's)")
    parser.add_argument(
        "--no-clip",
        action="store_true",
        help="plain noise-free averaging, as the workflow's flmech none (a pairing check)",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    loop.scale = INPUTS[args.inputs]  # every training and evaluation step of pipelib.train.loop scales through it
    config = cfgmod.validate(cfgmod.load(ROOT / "config.yaml", *args.configfile))
    settings = LdpflSettings.of(config, args.scenario)
    entry = next(e for e in config["ldpfl"]["datasets"].values() if e["scenario"] == args.scenario)
    c, r = args.box or entry["fixed_range"]
    rounds = args.rounds or int(entry["rounds"])
    seed = int(config["seed"])
    part = args.results / "partitions" / args.scenario
    private = config["scenarios"][args.scenario]["private"]

    dev = loop.start(args.threads, "cpu", "fp32")
    x_test, y_test, meta = load_labelled(part / "test.parquet", dev)
    clients = [
        Client(i, loop.to_device(x, dev), torch.as_tensor(y, device=dev))
        for i, (x, y) in enumerate(every_party(part / "assignment.parquet", args.results / "data" / private))
    ]
    fraction = float(args.fraction if args.fraction is not None else config["ldpfl"]["fraction"])
    key = f"{args.scenario}/{fraction}/{rounds}"  # run_row's pairing key: scenario/frac/rounds
    loop.seed_everything(torch_seed(seed, "ldpfl", key))
    model = initial_model(settings, tuple(x_test.shape[1:]), len(meta["task_classes"])).to(dev)
    start = {k: v.detach().clone() for k, v in model.named_parameters()}
    clip = None if args.no_clip else args.clip
    server = Server(start, len(clients), fraction, seed, key, (c, r), settings.adaptive_range, clip=clip)
    trainer = LocalSGD(
        model,
        settings.lr,
        settings.local_epochs,
        settings.batch,
        client_mode(settings.mode, model, tuple(x_test.shape[1:])),
        settings.group,
    )
    proto = FedAvg(model, clients, server, trainer, rounds, (x_test, y_test), seed=seed)
    clipped = [] if clip is None else [k for k in start if server.clip.fullmatch(k)]
    print(
        f"{args.scenario}: {len(clients)} clients, {settings.arch} ({settings.init} init), B = {settings.batch}, "
        f"E = {settings.local_epochs}, lr {settings.lr}, inputs {args.inputs}, box ({c:g}, {r:g}) holds "
        f"{share_in_box(start, c, r):.3f} of the initial weights; {rounds} rounds, "
        + (
            "uploads not clipped"
            if args.no_clip
            else f"uploads clipped ({len(clipped)} of {len(start)} tensors: {', '.join(clipped)})"
        )
        + ", no coins",
        flush=True,
    )
    rows, t0 = [], time.perf_counter()
    for t in range((args.stop if args.stop is not None else rounds) + 1):
        proto.play(t)
        acc = proto.evaluate(t)[0]["accuracy"]
        edge = share_in_box({k: server.params[k] for k in clipped}, c, r * (1 - 1e-6)) if clipped else 1.0
        rows.append({"round": t, "accuracy": acc, "inside_open_box": edge, "seconds": time.perf_counter() - t0})
        print(f"round {t:2d}: accuracy {acc:.4f}, {1 - edge:.3f} of the clipped values at the box's edge, "
              f"{rows[-1]['seconds']:.0f} s", flush=True)  # fmt: skip
    n = len(x_test)
    p = rows[-1]["accuracy"]
    half = 1.96 * np.sqrt(p * (1 - p) / n)
    print(f"final {p:.4f} (+-{half:.4f}, normal interval over {n} test records)")
    if args.out:
        args.out.write_text(json.dumps({"scenario": args.scenario, "box": [c, r], "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
