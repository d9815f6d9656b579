"""Reverse k-NN labeling (paper 003, Algorithm 1 with T = 1) as a teacher of the distillation stage.

Queries are k-means centers of the public embeddings (``cluster``); every private record votes, with
its label, for its k nearest queries (:meth:`RknnTeacher.answers`, in its party's job); the votes are
privatized by a registered mechanism (central Laplace by a trusted curator, or locally per record by
randomized response or Collision); the server labels each query by the argmax of the noisy counts and
every public sample inherits its cluster's label (:meth:`RknnTeacher.labels`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import faiss
import numpy as np
import pyarrow as pa

from ..io import load_npy, read_table, save_npy, table_meta, write_table
from ..runs import RknnRun
from ..seeding import rng

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------ clustering and votes


def kmeans_pp_init(x: np.ndarray, s: int, generator: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur & Vassilvitskii): each next center drawn with probability ~ D(x)^2."""
    centers = [x[generator.integers(len(x))]]
    d2 = ((x - centers[0]) ** 2).sum(1)
    for _ in range(1, s):
        c = x[generator.choice(len(x), p=d2 / d2.sum())] if d2.sum() > 0 else x[generator.integers(len(x))]
        centers.append(c)
        d2 = np.minimum(d2, ((x - c) ** 2).sum(1))
    return np.stack(centers).astype(np.float32)


def kmeans(x: np.ndarray, s: int, seed: int, niter: int = 25, starts: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Cluster ``x`` into s groups: ``starts`` k-means++ seedings, each refined by faiss k-means (Lloyd);
    keeps the run with the lowest within-cluster sum of squares (a function of ``x`` alone).

    Returns (centers, cluster id of every row)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if s > len(x):
        raise ValueError(f"cannot make s={s} clusters of {len(x)} public samples")
    if starts < 1:
        raise ValueError(f"k-means needs at least one start, got starts={starts}")
    best = None
    for start in range(starts):
        # start 0 keeps the key of the single-start runs, so starts = 1 reproduces them exactly
        keys = ("kmeans++",) if start == 0 else ("kmeans++", start)
        km = faiss.Kmeans(
            x.shape[1],
            s,
            niter=niter,
            seed=seed,
            verbose=False,
            min_points_per_centroid=1,
            max_points_per_centroid=max(256, len(x)),
        )
        km.train(x, init_centroids=kmeans_pp_init(x, s, rng(seed, *keys)))
        _, assign = km.index.search(x, 1)
        run = (inertia(x, km.centroids, assign[:, 0]), km.centroids.copy(), assign[:, 0].astype(np.int32))
        if best is None or run[0] < best[0]:
            best = run
    return best[1], best[2]


def inertia(x: np.ndarray, centers: np.ndarray, assign: np.ndarray) -> float:
    """Within-cluster sum of squared distances of ``x`` to its assigned centers (k-means' objective)."""
    x = np.asarray(x, dtype=np.float64)
    return float(((x - np.asarray(centers, dtype=np.float64)[assign]) ** 2).sum())


def nearest_queries(embeddings: np.ndarray, centers: np.ndarray, k: int) -> np.ndarray:
    """Indices of each record's k nearest queries (exact L2 search with faiss)."""
    index = faiss.IndexFlatL2(centers.shape[1])
    index.add(np.ascontiguousarray(centers, dtype=np.float32))
    _, nn = index.search(np.ascontiguousarray(embeddings, dtype=np.float32), k)
    return nn


def vote_counts(neighbours: np.ndarray, labels: np.ndarray, s: int, n_classes: int) -> np.ndarray:
    """a[l, c] = number of records with label c that have query l among their k nearest."""
    counts = np.zeros((s, n_classes), dtype=np.int64)
    np.add.at(counts, (neighbours, labels[:, None]), 1)
    return counts


def item_sets(neighbours: np.ndarray, labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Each record's voted cells (query, label) as flat item ids l * C + c: the BSVS item sets."""
    return neighbours * n_classes + labels[:, None]


def cluster_purity(clusters: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of samples whose label is their cluster's majority label: the highest label
    accuracy any labelling that gives each cluster one label can reach (evaluation only)."""
    if len(labels) == 0:
        return float("nan")
    _, cluster_ids = np.unique(clusters, return_inverse=True)
    counts = np.zeros((cluster_ids.max() + 1, int(labels.max()) + 1), np.int64)
    np.add.at(counts, (cluster_ids, labels), 1)
    return float(counts.max(1).sum() / len(labels))


def cluster(public_npy, s: int, seed: int, niter: int, out_centers, out_assign, starts: int = 1) -> None:
    """Stage entry: queries = k-means centers of the public embeddings; every public row keeps its cluster id."""
    x = load_npy(public_npy)
    t0 = time.perf_counter()
    centers, assign = kmeans(x, s, seed, niter, starts)
    sizes = np.bincount(assign, minlength=s)
    log.info(
        "k-means: %d x %d -> %d clusters (best of %d starts, inertia %.4g) in %.1f s; cluster sizes %d..%d",
        len(x),
        x.shape[1],
        s,
        starts,
        inertia(x, centers, assign),
        time.perf_counter() - t0,
        sizes.min(),
        sizes.max(),
    )
    save_npy(centers, out_centers)
    write_table(pa.table({"row": np.arange(len(x), dtype=np.int32), "cluster": assign}), out_assign)


# ---------------------------------------------------------------------------------------- the teacher


@dataclass(frozen=True)
class Votes:
    """A party's answers: every record's set of k voted cells of the (queries x classes) count matrix."""

    items: np.ndarray  # (records, k) flat cell ids l * C + c
    shape: tuple[int, int]  # (queries s, task classes C)

    @property
    def k(self) -> int:
        return int(self.items.shape[1])

    def counts(self) -> np.ndarray:
        """The party's summed votes (what the trusted curator of the central model receives)."""
        s, c = self.shape
        return np.bincount(self.items.ravel(), minlength=s * c).reshape(s, c).astype(np.int64)


@dataclass(frozen=True)
class RknnTeacher(RknnRun):
    """The teacher ``rknn-<encoder>-s<s>-k<k>`` (its run record: :class:`pipelib.runs.RknnRun`): k nearest of
    s queries in the encoder's space."""

    def answers(self, party_path, embeddings_npy, centers_npy) -> Votes:
        """A party's votes, from its own table and its own embeddings (in its own job)."""
        labels = read_table(party_path, columns=["label"]).column("label").to_numpy().astype(np.int64)
        n_classes = len(table_meta(party_path)["task_classes"])
        centers = load_npy(centers_npy)
        nn = nearest_queries(load_npy(embeddings_npy), centers, self.k)
        return Votes(item_sets(nn, labels, n_classes), (len(centers), n_classes))

    def release_fields(self, total: np.ndarray, inputs: dict) -> dict:
        """The curator's record of a release: the records that voted (``n``), k votes each."""
        return {"n": int(total.sum() // self.k)}

    def labels(self, counts: np.ndarray, assign_path, **_context) -> pa.Table:
        """The server: each query's label is the argmax of its noisy counts; public rows inherit their cluster's
        (``_context``: the job's seed and scenario, which this teacher does not need)."""
        query_label = counts.argmax(1).astype(np.int16)
        assign = read_table(assign_path).to_pandas()
        return pa.table(
            {
                "row": assign["row"].to_numpy(),
                "cluster": assign["cluster"].to_numpy(),
                "label": query_label[assign["cluster"].to_numpy()],
            }
        )
