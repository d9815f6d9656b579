"""Clustering and nearest-neighbour throughput: faiss (what pipelib.methods.rknn uses) vs scikit-learn, same data.

Prints vectors per second for k-means (s clusters, fixed iterations) and for k-NN search of private
embeddings against the s cluster centers.  By default the data are the reverse k-NN stage's own
embeddings when they exist (pass --public/--private .npy files), else a Gaussian mixture of the
same shape as the MNIST HOG setting.

    .venv/bin/python benchmarks/knn_speed.py
    .venv/bin/python benchmarks/knn_speed.py --public results/represent/rknn_cifar10/simclr/public.npy \\
        --private results/represent/rknn_cifar10/simclr/party-0.npy --s 500
"""

from __future__ import annotations

import argparse
import time

import faiss
import numpy as np
from sklearn.cluster import KMeans
from sklearn.neighbors import NearestNeighbors

from pipelib.methods import rknn


def mixture(n, d, centers, seed):
    g = np.random.default_rng(seed)
    means = g.normal(0, 1, (centers, d))
    x = means[g.integers(0, centers, n)] + 0.3 * g.normal(0, 1, (n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def timed(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--public", help=".npy of public embeddings (default: synthetic)")
    ap.add_argument("--private", help=".npy of private embeddings (default: synthetic)")
    ap.add_argument("--n-public", type=int, default=5000)
    ap.add_argument("--n-private", type=int, default=60000)
    ap.add_argument("--dim", type=int, default=324)
    ap.add_argument("--s", type=int, default=40, help="clusters (queries)")
    ap.add_argument("--k", type=int, default=1, help="nearest queries per private record")
    ap.add_argument("--iterations", type=int, default=25)
    ap.add_argument("--threads", type=int, default=0, help="0: all cores")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    pub = np.load(args.public).astype(np.float32) if args.public else mixture(args.n_public, args.dim, 10, 0)
    priv = np.load(args.private).astype(np.float32) if args.private else mixture(args.n_private, pub.shape[1], 10, 1)
    init = rknn.kmeans_pp_init(pub, args.s, np.random.default_rng(0))

    def faiss_kmeans():
        km = faiss.Kmeans(
            pub.shape[1],
            args.s,
            niter=args.iterations,
            seed=0,
            min_points_per_centroid=1,
            max_points_per_centroid=len(pub),
        )
        km.train(pub, init_centroids=init)
        return km.centroids

    def sk_kmeans():
        return (
            KMeans(args.s, init=init, n_init=1, max_iter=args.iterations, tol=0.0, algorithm="lloyd", random_state=0)
            .fit(pub)
            .cluster_centers_
        )

    t_fk, centers = timed(faiss_kmeans, args.repeat)
    t_sk, _ = timed(sk_kmeans, args.repeat)

    def faiss_search():
        return rknn.nearest_queries(priv, centers, args.k)

    def sk_search():
        return NearestNeighbors(n_neighbors=args.k, algorithm="brute").fit(centers).kneighbors(priv)[1]

    t_fs, a = timed(faiss_search, args.repeat)
    t_ss, b = timed(sk_search, args.repeat)
    agree = float((a[:, 0] == b[:, 0]).mean())
    print(
        f"public {pub.shape}, private {priv.shape}, s = {args.s}, k = {args.k}, {args.iterations} Lloyd iterations, "
        f"faiss threads {faiss.omp_get_max_threads()}, best of {args.repeat}"
    )
    print(f"  k-means  faiss   {len(pub) * args.iterations / t_fk:12.0f} vector-iterations/s  ({t_fk:.3f} s)")
    print(
        f"  k-means  sklearn {len(pub) * args.iterations / t_sk:12.0f} vector-iterations/s  ({t_sk:.3f} s)"
        f"   faiss/sklearn = {t_sk / t_fk:.1f}x"
    )
    print(f"  k-NN     faiss   {len(priv) / t_fs:12.0f} queries/s  ({t_fs:.3f} s)")
    print(
        f"  k-NN     sklearn {len(priv) / t_ss:12.0f} queries/s  ({t_ss:.3f} s)   faiss/sklearn = {t_ss / t_fs:.1f}x"
        f"   (same nearest query for {agree:.4f} of records)"
    )


if __name__ == "__main__":
    main()
