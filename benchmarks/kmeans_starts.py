"""Cluster purity of reverse k-NN's queries against the number of k-means starts (issue 29), with a
Gaussian mixture on the same embedding beside it (N2D's choice on its UMAP embedding).

For every public embedding named on the command line (``represent/<scenario>/<encoder>/public.npy`` of a
results directory) and every s, prints: k-means with 1, 3, 10 and 30 k-means++ starts (the run with
the lowest within-cluster sum of squares kept: ``pipelib.methods.rknn.kmeans``), and a full-covariance
Gaussian mixture (scikit-learn, k-means initialised, 3 initialisations): cluster purity (the share of
public samples whose true label is their cluster's majority label; labels used for this evaluation
only), inertia and seconds.  Repeated for ``--seeds`` seeds, since one seed's purity is one draw.

    .venv/bin/python benchmarks/kmeans_starts.py results/reduced rknn_mnist/umap_digits rknn_cifar10/simclr --s 10
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.mixture import GaussianMixture

from pipelib.io import load_npy, read_table
from pipelib.methods import rknn


def measure(x: np.ndarray, y: np.ndarray, s: int, seed: int, starts: list[int], niter: int) -> list[dict]:
    rows = []
    for n in starts:
        t0 = time.perf_counter()
        centers, assign = rknn.kmeans(x, s, seed, niter, n)
        rows.append(
            {
                "method": f"k-means x{n}",
                "purity": rknn.cluster_purity(assign, y),
                "inertia": rknn.inertia(x, centers, assign),
                "seconds": time.perf_counter() - t0,
            }
        )
    t0 = time.perf_counter()
    gmm = GaussianMixture(s, covariance_type="full", n_init=3, random_state=seed).fit(x)
    _, assign = np.unique(gmm.predict(x), return_inverse=True)
    means = np.stack([x[assign == c].mean(0) for c in range(assign.max() + 1)])
    rows.append(
        {
            "method": "GMM full x3",
            "purity": rknn.cluster_purity(assign, y),
            "inertia": rknn.inertia(x, means, assign),
            "seconds": time.perf_counter() - t0,
        }
    )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", type=Path)
    ap.add_argument("embeddings", nargs="+", help="<scenario>/<encoder> under represent/")
    ap.add_argument("--s", type=int, nargs="+", default=[10])
    ap.add_argument("--starts", type=int, nargs="+", default=[1, 3, 10, 30])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=25)
    args = ap.parse_args()
    rows = []
    for name in args.embeddings:
        scenario, encoder = name.split("/")
        x = load_npy(args.results / "represent" / scenario / encoder / "public.npy").astype(np.float32)
        y = read_table(args.results / "partitions" / scenario / "public.parquet", columns=["label"])
        y = y.column("label").to_numpy().astype(np.int64)
        for s in args.s:
            for seed in range(args.seeds):
                for r in measure(x, y, s, seed, args.starts, args.iterations):
                    rows.append({"embedding": name, "s": s, "seed": seed, **r})
                    print(
                        f"{name} s={s} seed={seed} {r['method']:>12}: purity {r['purity']:.3f}  "
                        f"inertia {r['inertia']:.4g}  {r['seconds']:.1f} s",
                        flush=True,
                    )
    df = pd.DataFrame(rows)
    summary = df.groupby(["embedding", "s", "method"], sort=False).agg(
        purity_mean=("purity", "mean"),
        purity_min=("purity", "min"),
        purity_max=("purity", "max"),
        inertia_mean=("inertia", "mean"),
        seconds=("seconds", "mean"),
    )
    print()
    print(summary.to_string(float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
