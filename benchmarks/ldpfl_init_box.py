"""How much of each LDP-FL model sits inside its dataset's fixed box at initialisation (issue 51): per preset
and dataset, the share of every weight tensor's values (and of all parameters) within [c - r, c + r] of
``ldpfl.datasets.<dataset>.fixed_range``, under He initialisation and under PyTorch's default.  A weight
outside the box is clipped by every client in the first round of a fixed-range run.

    .venv/bin/python benchmarks/ldpfl_init_box.py            # paper and reduced presets
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from pipelib import config as cfgmod
from pipelib.methods.ldpfl import share_in_box, torch_default_init
from pipelib.train.models import build

ROOT = Path(__file__).resolve().parents[1]
SHAPES = {"mnist": (1, 28, 28), "fashion_mnist": (1, 28, 28), "cifar10": (3, 32, 32)}


def inside(model: torch.nn.Module, c: float, r: float) -> dict[str, float]:
    """Share of each parameter tensor's values inside [c - r, c + r], and of all of them ('all')."""
    params = {name: p.detach() for name, p in model.named_parameters()}
    return {"all": share_in_box(params, c, r), **{k: share_in_box({k: v}, c, r) for k, v in params.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["paper", "reduced"], help="paper = config.yaml alone")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for preset in args.presets:
        files = [ROOT / "config.yaml"] + ([] if preset == "paper" else [ROOT / "presets" / f"{preset}.yaml"])
        config = cfgmod.validate(cfgmod.load(*files))
        for dataset, entry in config["ldpfl"]["datasets"].items():
            private = config["scenarios"][entry["scenario"]]["private"]
            c, r = entry["fixed_range"]
            rows = {}
            for init in ("he", "torch"):
                torch.manual_seed(args.seed)
                model = build(entry["arch"], SHAPES[private], 10)
                if init == "torch":
                    torch_default_init(model)
                rows[init] = inside(model, c, r)
            sizes = {k: p.numel() for k, p in model.named_parameters() if k.endswith("weight")}
            largest = max(sizes, key=sizes.get)
            print(
                f"{preset:8s} {dataset:14s} {entry['arch']:22s} box ({c:g}, {r:g}): all parameters "
                f"he {rows['he']['all']:.3f} / torch {rows['torch']['all']:.3f}; largest weight ({largest}) "
                f"he {rows['he'][largest]:.3f} / torch {rows['torch'][largest]:.3f}"
            )


if __name__ == "__main__":
    main()
