"""Reverse k-NN labeling (paper 003, Algorithm 1 with T = 1): queries are k-means centers of the public
embeddings; every private record votes, with its label, for its k nearest queries; the votes are
privatized (central Laplace by a trusted curator, or locally per record by randomized response or
Collision); the server labels each query by the argmax of the noisy counts, every public sample
inherits its cluster's label, and a student is trained on the labelled public set.
"""

from __future__ import annotations

import logging
import math
import time

import faiss
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from . import privacy, represent, train
from .io import atomic_path, read_images, read_json, write_json, write_table
from .seeding import rng

log = logging.getLogger(__name__)

MECHANISMS = ("none", "laplace", "rr", "collision")
CENTRAL, LOCAL = ("none", "laplace"), ("rr", "collision")


def parse_mechanism(name: str) -> tuple[str, float]:
    """'none' -> ('none', inf); 'laplace-eps0.1' -> ('laplace', 0.1)."""
    if name == "none":
        return "none", math.inf
    kind, eps = name.split("-eps")
    if kind not in MECHANISMS:
        raise ValueError(f"unknown mechanism {kind!r}; allowed: {', '.join(MECHANISMS)}")
    return kind, float(eps)


def save_npy(array: np.ndarray, path) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, array)


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


def kmeans(x: np.ndarray, s: int, seed: int, niter: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """Cluster ``x`` into s groups: k-means++ seeding, then faiss k-means (Lloyd) from those seeds.

    Returns (centers, cluster id of every row)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if s > len(x):
        raise ValueError(f"cannot make s={s} clusters of {len(x)} public samples")
    init = kmeans_pp_init(x, s, rng(seed, "kmeans++"))
    km = faiss.Kmeans(x.shape[1], s, niter=niter, seed=seed, verbose=False, min_points_per_centroid=1,
                      max_points_per_centroid=max(256, len(x)))
    km.train(x, init_centroids=init)
    _, assign = km.index.search(x, 1)
    return km.centroids.copy(), assign[:, 0].astype(np.int32)


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


# ------------------------------------------------------------------------------------- stage entries

def _device_images(path, device):
    frame, images, meta = read_images(path)
    return frame, train.to_device(images, device), meta


def train_encoder(encoder: str, settings: dict, public_index, public_data, seed: int, device: str, threads: int,
                  out_model, checkpoint=None) -> None:
    """SimCLR encoder on the public images only (no labels)."""
    from .experiments import load_public_pool

    train.set_threads(threads)
    dev = train.pick_device(device)
    x, _ = load_public_pool(public_index, public_data, dev)
    limit = settings.get("max_images", 0)
    if 0 < limit < len(x):  # a seeded subset of the public pool (reduced presets)
        keep = np.sort(rng(seed, "simclr-subset", encoder).choice(len(x), limit, replace=False))
        x = x[torch.from_numpy(keep).to(dev)]
    gen = train.seed_everything(int(rng(seed, "simclr", encoder).integers(2**31 - 1)))
    fp = train.fingerprint("simclr", encoder, settings, str(public_index), seed)
    model = represent.train_simclr(x, settings["arch"], settings["dim"], settings["epochs"], settings["batch"],
                                   settings["lr"], settings["temperature"], gen, log, checkpoint, fp)
    with atomic_path(out_model) as tmp:
        torch.save({"arch": model.arch, "in_shape": model.in_shape, "dim": model.dim,
                    "state_dict": {k: v.cpu() for k, v in model.state_dict().items()}}, tmp)
    train.clear_checkpoint(checkpoint)


def _embed_images(images_u8: np.ndarray, settings: dict, model_path, device: str) -> np.ndarray:
    if settings["kind"] == "hog":
        return represent.hog_features(images_u8, settings.get("orientations", 9), settings.get("cells", 4))
    state = torch.load(model_path, map_location="cpu", weights_only=False)
    encoder = represent.Encoder(state["arch"], state["in_shape"], state["dim"])
    encoder.load_state_dict(state["state_dict"])
    dev = train.pick_device(device)
    return represent.embed(train.prepare(encoder, dev), train.to_device(images_u8, dev))


def embed_public(settings: dict, public_index, public_data, model_path, device: str, threads: int, out_npy) -> None:
    """Embed the public pool (row i of the output = row i of the partition's public index)."""
    train.set_threads(threads)
    index = pq.read_table(public_index, columns=["index"]).column("index").to_numpy()
    _, images, _ = read_images(public_data)
    save_npy(_embed_images(images[index], settings, model_path, device), out_npy)


def embed_party(settings: dict, party_path, model_path, device: str, threads: int, out_npy) -> None:
    """A party embeds its own images (row i = row i of its partition table)."""
    train.set_threads(threads)
    _, images, _ = read_images(party_path)
    save_npy(_embed_images(images, settings, model_path, device), out_npy)


def cluster(public_npy, s: int, seed: int, niter: int, out_centers, out_assign) -> None:
    """Queries = k-means centers of the public embeddings; every public row keeps its cluster id."""
    x = np.load(public_npy)
    t0 = time.perf_counter()
    centers, assign = kmeans(x, s, seed, niter)
    log.info("k-means: %d x %d -> %d clusters in %.1f s; cluster sizes %d..%d", len(x), x.shape[1], s,
             time.perf_counter() - t0, np.bincount(assign, minlength=s).min(), np.bincount(assign, minlength=s).max())
    save_npy(centers, out_centers)
    write_table(pa.table({"row": np.arange(len(x), dtype=np.int32), "cluster": assign}), out_assign)


def party_votes(party_path, embeddings_npy, centers_npy, k: int, out_npy) -> None:
    """A party's raw vote counts (queries x task classes), for the trusted curator of the central model."""
    labels, n_classes = _party_labels(party_path)
    centers = np.load(centers_npy)
    save_npy(vote_counts(nearest_queries(np.load(embeddings_npy), centers, k), labels, len(centers), n_classes),
             out_npy)


def party_local_answer(party_path, embeddings_npy, centers_npy, k: int, mechanism: str, seed: int, party: int,
                       out_json) -> None:
    """A party's locally private answer: every record randomized on its own (RR or Collision), summed.

    Only the sum of the records' randomized reports leaves the party (post-processing of LDP outputs)."""
    kind, eps = parse_mechanism(mechanism)
    labels, n_classes = _party_labels(party_path)
    centers = np.load(centers_npy)
    s = len(centers)
    nn = nearest_queries(np.load(embeddings_npy), centers, k)
    gen = rng(seed, "ldp", mechanism, k, party)
    if kind == "rr":
        bits = np.zeros((len(labels), s * n_classes), dtype=bool)
        np.put_along_axis(bits, item_sets(nn, labels, n_classes), True, axis=1)
        released = privacy.rr_release(bits, eps, k, gen)
    elif kind == "collision":
        released = privacy.collision_release(item_sets(nn, labels, n_classes), s * n_classes, eps, gen)
    else:
        raise ValueError(f"{kind!r} is not a local mechanism ({', '.join(LOCAL)})")
    write_json({"mechanism": kind, "epsilon": eps, "k": k, "records": int(len(labels)), "shape": [s, n_classes],
                "released": released.tolist()}, out_json)


def _party_labels(party_path):
    from .io import table_meta

    labels = pq.read_table(party_path, columns=["label"]).column("label").to_numpy().astype(np.int64)
    return labels, len(table_meta(party_path)["task_classes"])


def curate(votes_paths, mechanism: str, k: int, seed: int, out_npy) -> None:
    """The trusted curator of the central model: sums the parties' votes and adds Laplace(2k/eps) noise.
    The server reads only this noisy sum."""
    kind, eps = parse_mechanism(mechanism)
    total = sum(np.load(p) for p in votes_paths)
    if kind == "laplace":
        total = privacy.laplace_counts(total, eps, k, rng(seed, "laplace", mechanism, k))
    elif kind != "none":
        raise ValueError(f"{kind!r} is not a central mechanism ({', '.join(CENTRAL)})")
    save_npy(total.astype(np.float64), out_npy)


def aggregate_local(answer_paths, out_npy) -> None:
    """The server's unbiased count estimate from the parties' locally private answers."""
    answers = [read_json(p) for p in answer_paths]
    a = answers[0]
    released = sum(np.asarray(x["released"], dtype=np.float64) for x in answers)
    n = sum(x["records"] for x in answers)
    if a["mechanism"] == "rr":
        est = privacy.rr_estimate(released, n, a["epsilon"], a["k"])
    else:
        est = privacy.collision_estimate(released, n, a["epsilon"], a["k"])
    save_npy(est.reshape(a["shape"]), out_npy)


def label_queries(noisy_counts_npy, assign_path, out_labels) -> None:
    """The server: each query's label is the argmax of its noisy counts; public rows inherit their cluster's."""
    counts = np.load(noisy_counts_npy)
    query_label = counts.argmax(1).astype(np.int16)
    assign = pq.read_table(assign_path).to_pandas()
    write_table(pa.table({"row": assign["row"].to_numpy(), "cluster": assign["cluster"].to_numpy(),
                          "label": query_label[assign["cluster"].to_numpy()]}), out_labels)


def student(labels_path, public_index, public_data, test_path, settings: dict, device: str, threads: int,
            seed: int, out_json, label_accuracy: bool = True, checkpoint=None) -> dict:
    """Train a student on the privately labelled public set; report Acc_pl and Acc_pc."""
    from .experiments import load_labelled, load_public_pool
    from .models import build, optimizer

    train.set_threads(threads)
    dev = train.pick_device(device)
    labels = pq.read_table(labels_path).to_pandas()
    x_pub, _ = load_public_pool(public_index, public_data, dev)
    x_test, y_test, meta = load_labelled(test_path, dev)
    n_classes = len(meta["task_classes"])
    y_pub = torch.as_tensor(labels["label"].to_numpy().astype(np.int64), device=dev)
    acc_pl = None
    if label_accuracy:  # evaluation only: the public set's true labels, in the same label space
        truth = pq.read_table(public_index, columns=["label"]).column("label").to_numpy()
        acc_pl = float((labels["label"].to_numpy() == truth).mean())
    gen = train.seed_everything(int(rng(seed, "student").integers(2**31 - 1)))
    model = train.prepare(build(settings["arch"], x_pub.shape[1:], n_classes), dev)
    opt = optimizer(model, settings["lr"])
    t0 = time.perf_counter()
    fp = train.fingerprint("student", str(labels_path), settings, seed)
    for epoch in train.resumable_epochs(settings["epochs"], checkpoint, fp, model, opt, gen, []):
        stats = train.fit(model, opt, x_pub, y_pub, train.hard_ce, 1, settings["batch"], gen)
        log.info("student epoch %d/%d: loss %.4f, test accuracy %.4f", epoch + 1, settings["epochs"], stats["loss"],
                 train.accuracy(model, x_test, y_test))
    result = {"label_accuracy": acc_pl, "test_accuracy": train.accuracy(model, x_test, y_test),
              "public_n": len(x_pub), "test_n": len(x_test), "queries": int(labels["cluster"].max() + 1),
              "student_seconds": time.perf_counter() - t0, "device": str(dev)}
    write_json(result, out_json)
    train.clear_checkpoint(checkpoint)
    return result
