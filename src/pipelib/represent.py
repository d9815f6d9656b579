"""Representations for reverse k-NN labeling (paper 003): HOG (optionally of deskewed digits, at
several cell sizes), a SimCLR-style contrastive encoder, a UMAP manifold embedding of another
encoder's features (as N2D does) and a SCAN clustering head on another encoder's features, each fitted
on the public images only.  HOG and SimCLR embeddings are L2-normalised float32 rows; UMAP's are
coordinates in its low-dimensional space; SCAN's are cluster probabilities.

An encoder never sees a private label; private images only pass through it to be embedded, in each
party's own job.  Every encoder is a chain: ``settings["base"]`` (a UMAP or SCAN encoder's input) is embedded
first, with the model files listed before the encoder's own.
"""

from __future__ import annotations

import logging
import math
import pickle
import time

import faiss
import numpy as np
import torch
import torch.nn.functional as F
import umap
from torch import nn

from .data.loaders import load_public
from .features import deskew, hog_encoder, hog_features, l2_normalize  # noqa: F401 (part of this module's interface)
from .io import atomic_path, read_images, save_npy
from .job import Job
from .seeding import rng, torch_seed
from .train import loop
from .train.checkpoint import NO_RESUME, Resume, clear_checkpoint, fingerprint, load_torch
from .train.models import build
from .train.supervised import Monitor, TrainSettings, save_state, train_supervised
from .vocab import ENCODER_KINDS

ENCODERS = ENCODER_KINDS
log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------- SimCLR


def augment(x: torch.Tensor, rgb: bool) -> torch.Tensor:
    """Random views of a batch in [-1, 1], drawn from torch's global RNG (batched, no per-image Python).

    Random resized crop (scale 0.35-1, aspect 3/4-4/3) with a small rotation, by one affine
    ``grid_sample``; for colour images also horizontal flips, colour jitter and random grayscale.
    """
    n, dev = len(x), x.device
    scale = torch.empty(n, device=dev).uniform_(0.35, 1.0).sqrt()
    log_aspect = torch.empty(n, device=dev).uniform_(math.log(3 / 4), math.log(4 / 3))
    sx, sy = scale * log_aspect.exp().sqrt(), scale / log_aspect.exp().sqrt()
    angle = torch.empty(n, device=dev).uniform_(-0.25, 0.25) if not rgb else torch.zeros(n, device=dev)
    flip = torch.where(torch.rand(n, device=dev) < 0.5, -1.0, 1.0) if rgb else torch.ones(n, device=dev)
    tx = (1 - sx).clamp_min(0) * torch.empty(n, device=dev).uniform_(-1, 1)
    ty = (1 - sy).clamp_min(0) * torch.empty(n, device=dev).uniform_(-1, 1)
    cos, sin = angle.cos(), angle.sin()
    theta = torch.stack(
        [torch.stack([sx * cos * flip, -sy * sin, tx], 1), torch.stack([sx * sin * flip, sy * cos, ty], 1)], 1
    )
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    out = F.grid_sample(x, grid, padding_mode="border" if rgb else "zeros", align_corners=False)
    if not rgb:
        out = torch.where(out == 0, torch.full_like(out, -1.0), out)  # zero padding -> background (-1)
        return out

    def factor(lo, hi):
        return torch.empty(n, 1, 1, 1, device=dev).uniform_(lo, hi)

    gray = out.mean(1, keepdim=True)
    out = out * factor(0.6, 1.4)  # brightness
    out = (out - out.mean((1, 2, 3), keepdim=True)) * factor(0.6, 1.4) + out.mean((1, 2, 3), keepdim=True)  # contrast
    out = gray + (out - gray) * factor(0.4, 1.6)  # saturation
    to_gray = torch.rand(n, 1, 1, 1, device=dev) < 0.2
    out = torch.where(to_gray, out.mean(1, keepdim=True).expand_as(out), out)
    return out.clamp(-1, 1)


class Encoder(nn.Module):
    """A FedMD CNN body followed by a linear layer: the representation h(x)."""

    def __init__(self, arch: str, in_shape, dim: int):
        super().__init__()
        body = build(arch, in_shape, 2)  # the 2-class head is discarded
        self.features = body.features
        self.out = nn.Linear(body.classifier.in_features, dim)
        self.arch, self.in_shape, self.dim = arch, tuple(in_shape), dim

    def forward(self, x):
        return self.out(self.features(x))


class SimCLR(nn.Module):
    """Two augmented views -> encoder -> projection head; ``forward`` returns both views' projections
    stacked, so that ``loop.fit`` can train it with :func:`nt_xent` as the loss."""

    def __init__(self, encoder: Encoder, proj_dim: int = 64):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(
            nn.Linear(encoder.dim, encoder.dim), nn.ReLU(inplace=True), nn.Linear(encoder.dim, proj_dim)
        )
        self.rgb = encoder.in_shape[0] == 3

    def forward(self, x):
        views = torch.cat([augment(x, self.rgb), augment(x, self.rgb)])
        return self.head(self.encoder(views.contiguous(memory_format=torch.channels_last)))


def nt_xent(z: torch.Tensor, temperature: float) -> torch.Tensor:
    """SimCLR's normalised-temperature cross-entropy; z stacks view 1 (first half) and view 2."""
    z = F.normalize(z, dim=1)
    n = len(z) // 2
    sim = z @ z.T / temperature
    sim.fill_diagonal_(float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, target)


def train_simclr(x_u8: torch.Tensor, settings: dict, gen: torch.Generator, resume: Resume = NO_RESUME) -> Encoder:
    """Train an encoder on unlabelled images (public data only) with SimCLR's contrastive loss.
    ``settings``: arch, dim, epochs, batch, lr, temperature."""
    encoder = Encoder(settings["arch"], x_u8.shape[1:], settings["dim"])
    model = loop.prepare(SimCLR(encoder), x_u8.device)
    opt = torch.optim.Adam(model.parameters(), lr=settings["lr"], weight_decay=1e-6)

    dummy = torch.zeros(len(x_u8), dtype=torch.long, device=x_u8.device)  # no labels: the loss pairs the views
    train_supervised(
        model,
        opt,
        (x_u8, dummy),
        TrainSettings.from_config(settings),
        gen,
        Monitor("simclr"),
        objective=loop.Objective(lambda z, _: nt_xent(z, settings["temperature"])),
        resume=resume,
    )
    return encoder.eval()


@torch.no_grad()
def embed(encoder: Encoder, x_u8: torch.Tensor, batch: int = 1024) -> np.ndarray:
    """L2-normalised representations of uint8 images."""
    encoder.eval()
    parts = [encoder(loop.scale(x_u8[i : i + batch])).cpu().numpy() for i in range(0, len(x_u8), batch)]
    return l2_normalize(np.concatenate(parts)) if parts else np.zeros((0, encoder.dim), np.float32)


# ---------------------------------------------------------------------------------------------- SCAN


class ScanHead(nn.Module):
    """SCAN's clustering head on fixed features: dropout (the features' augmentation), an MLP, and
    ``clusters`` logits."""

    def __init__(self, dim: int, clusters: int, hidden: int, dropout: float):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(dim, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, clusters)
        )
        self.spec = {"dim": dim, "clusters": clusters, "hidden": hidden, "dropout": dropout}

    def forward(self, features):
        return self.mlp(features)


class _Rows(nn.Module):
    """Train a head on row ids: ``forward(ids)`` is the head's logits of those rows (two independent
    dropout draws of a row and of a random one of its mined neighbours, stacked, when ``neighbours``)."""

    def __init__(self, head: ScanHead, features: torch.Tensor, neighbours: torch.Tensor | None = None):
        super().__init__()
        self.head, self.features, self.neighbours = head, features, neighbours

    def forward(self, ids):
        if self.neighbours is None:
            return self.head(self.features[ids])
        pick = torch.randint(self.neighbours.shape[1], (len(ids),), device=ids.device)
        return torch.cat([self.head(self.features[ids]), self.head(self.features[self.neighbours[ids, pick]])])


def scan_loss(logits: torch.Tensor, entropy_weight: float) -> torch.Tensor:
    """SCAN's loss (Van Gansbeke et al. 2020, Eq. 2): -log <p(anchor), p(neighbour)> averaged, plus
    ``entropy_weight`` x the negative entropy of the mean assignment (which keeps clusters apart)."""
    n = len(logits) // 2
    p = F.softmax(logits, dim=1)
    consistency = -torch.log((p[:n] * p[n:]).sum(1).clamp_min(1e-8)).mean()
    mean = p[:n].mean(0)
    return consistency + entropy_weight * (mean * torch.log(mean.clamp_min(1e-8))).sum()


def mine_neighbours(features: np.ndarray, k: int) -> np.ndarray:
    """Each row's k nearest other rows by cosine similarity (exact, faiss)."""

    x = l2_normalize(np.ascontiguousarray(features, dtype=np.float32))
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    _, nn_ = index.search(x, min(k + 1, len(x)))
    return nn_[:, 1:]


def train_scan(features: np.ndarray, settings: dict, gen: torch.Generator) -> ScanHead:
    """SCAN on fixed features (public only): the clustering step on mined nearest neighbours, then
    self-labelling on the confidently assigned rows (probability > ``threshold``)."""

    f = torch.from_numpy(l2_normalize(features))
    ids = torch.arange(len(f))
    neighbours = torch.from_numpy(mine_neighbours(features, settings["neighbours"]).astype(np.int64))
    head = ScanHead(f.shape[1], settings["clusters"], settings["hidden"], settings["dropout"])
    opt = torch.optim.Adam(head.parameters(), lr=settings["lr"], weight_decay=1e-4)
    same = lambda x: x  # noqa: E731 (the rows are ids, not pixels)
    train_supervised(
        _Rows(head, f, neighbours),
        opt,
        (ids, torch.zeros_like(ids)),
        TrainSettings(settings["epochs"], settings["batch"], settings["lr"]),
        gen,
        Monitor("scan"),
        objective=loop.Objective(lambda z, _: scan_loss(z, settings["entropy_weight"]), prep=same),
    )
    for round_ in range(settings["selflabel_epochs"]):  # re-select the confident rows every epoch
        with torch.no_grad():
            prob = F.softmax(head.eval()(f), dim=1)
        confident = ids[prob.max(1).values > settings["threshold"]]
        log.info("SCAN self-labelling %d: %d of %d rows confident", round_ + 1, len(confident), len(ids))
        if len(confident) < 2:
            break
        train_supervised(
            _Rows(head, f),
            opt,
            (confident, prob.argmax(1)[confident]),
            TrainSettings(1, settings["batch"], settings["lr"]),
            gen,
            Monitor("scan self-label"),
            objective=loop.Objective(prep=same),
        )
    return head.eval()


@torch.no_grad()
def scan_embed(head: ScanHead, features: np.ndarray) -> np.ndarray:
    """The head's cluster probabilities of (L2-normalised) features."""
    if len(features) == 0:
        return np.zeros((0, head.spec["clusters"]), np.float32)
    return F.softmax(head.eval()(torch.from_numpy(l2_normalize(features))), dim=1).numpy().astype(np.float32)


def load_scan(path) -> ScanHead:

    state = load_torch(path)
    head = ScanHead(state["dim"], state["clusters"], state["hidden"], state["dropout"])
    head.load_state_dict(state["state_dict"])
    return head.eval()


# ------------------------------------------------------------------------------------- stage entries


def save_encoder(encoder: Encoder, path) -> None:

    save_state(path, {"arch": encoder.arch, "in_shape": encoder.in_shape, "dim": encoder.dim}, encoder)


def load_encoder(path) -> Encoder:

    state = load_torch(path)
    encoder = Encoder(state["arch"], state["in_shape"], state["dim"])
    encoder.load_state_dict(state["state_dict"])
    return encoder


def fit_umap(features: np.ndarray, settings: dict, seed: int):
    """A UMAP reducer (umap-learn) fitted on public features; seeded, hence single-threaded and
    deterministic.  ``reducer.embedding_`` holds the public rows' coordinates."""

    reducer = umap.UMAP(
        n_components=settings["n_components"],
        n_neighbors=settings["n_neighbors"],
        min_dist=settings["min_dist"],
        metric=settings.get("metric", "euclidean"),
        random_state=seed,
        n_jobs=1,
        transform_seed=seed,
    )
    reducer.fit(features)
    return reducer


def save_umap(reducer, features: np.ndarray, settings: dict, path) -> None:
    """Write a fitted UMAP encoder: the reducer, the public features it was fit on and their coordinates."""

    state = {
        "kind": "umap",
        "reducer": pickle.dumps(reducer),
        "features": np.ascontiguousarray(features, dtype=np.float32),
        "embedding": reducer.embedding_.astype(np.float32),
        "n_neighbors": settings["n_neighbors"],
        "transform": settings.get("transform", "neighbours"),
    }
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def membership_weights(distances: np.ndarray, iterations: int = 64) -> np.ndarray:
    """UMAP's fuzzy membership of each row's k nearest neighbours (its ``smooth_knn_dist``), from
    squared distances: w_j = exp(-(d_j - rho) / sigma), rho the nearest distance and sigma solved by
    bisection so that the k - 1 farther neighbours' weights sum to log2(k); rows normalised to sum 1."""
    d = np.sqrt(np.maximum(distances, 0.0)).astype(np.float64)
    excess = d - d[:, :1]
    target = np.log2(d.shape[1])
    lo, hi = np.zeros(len(d)), np.full(len(d), np.inf)
    sigma = np.ones(len(d))
    for _ in range(iterations):
        total = np.exp(-excess[:, 1:] / sigma[:, None]).sum(1)
        wide = total > target  # too wide a kernel: shrink sigma
        hi = np.where(wide, sigma, hi)
        lo = np.where(wide, lo, sigma)
        sigma = np.where(np.isinf(hi), sigma * 2, (lo + hi) / 2)
    w = np.exp(-excess / np.maximum(sigma, 1e-12)[:, None])
    return w / w.sum(1, keepdims=True)


def neighbour_transform(state: dict, features: np.ndarray) -> np.ndarray:
    """New rows placed at the membership-weighted mean of their n_neighbors nearest public rows'
    coordinates (exact search with faiss): umap-learn's own initialisation of ``transform``, without its
    further optimisation epochs, at a fraction of the cost."""

    index = faiss.IndexFlatL2(state["features"].shape[1])
    index.add(state["features"])
    distances, nn = index.search(np.ascontiguousarray(features, dtype=np.float32), state["n_neighbors"])
    w = membership_weights(distances)
    return (w[..., None] * state["embedding"][nn]).sum(1).astype(np.float32)


def umap_embed(state: dict, features: np.ndarray) -> np.ndarray:
    """Coordinates of ``features``: the fitted ones when they are exactly the public features the
    reducer was fit on (the public pool), else the out-of-sample transform ``state["transform"]``
    (``neighbours``: :func:`neighbour_transform`; ``umap``: umap-learn's ``transform``)."""

    if len(features) == 0:
        return np.zeros((0, state["embedding"].shape[1]), np.float32)
    if features.shape == state["features"].shape and np.array_equal(features, state["features"]):
        return state["embedding"]
    if state["transform"] == "neighbours":
        return neighbour_transform(state, features)
    return pickle.loads(state["reducer"]).transform(features).astype(np.float32)


def train_encoder(job: Job, settings: dict) -> None:
    """Fit the job's ``encoder`` on the scenario's public images only (input ``public``; no labels):
    SimCLR on the images, UMAP or a SCAN head on its input encoder's embeddings of them (input ``base``:
    that encoder's model files).  Writes the job's one output."""

    name, seed, device, checkpoint, public_path = (
        job["encoder"],
        job.seed,
        job.device,
        job.checkpoint,
        job.input["public"],
    )
    base_models, out_model = job.input.get("base", []), job.output["model"]
    loop.set_threads(job.threads)
    if settings["kind"] in ("umap", "scan"):
        _, images, _ = read_images(public_path)
        features = embed_images(images, settings["base"], base_models, device)
        t0 = time.perf_counter()
        if settings["kind"] == "umap":
            reducer = fit_umap(features, settings, int(rng(seed, "umap", name).integers(2**31 - 1)))
            save_umap(reducer, features, settings, out_model)
        else:
            head = train_scan(features, settings, loop.seed_everything(torch_seed(seed, "scan", name)))
            save_state(out_model, {"kind": "scan", **head.spec}, head)
        took = time.perf_counter() - t0
        log.info("%s: %d x %d features fitted in %.1f s", settings["kind"], *features.shape, took)
        return
    dev = loop.start(job.threads, device, job.precision)
    x, _ = load_public(public_path, dev)
    limit = settings.get("max_images", 0)
    if 0 < limit < len(x):  # a seeded subset of the public pool (reduced presets)
        keep = np.sort(rng(seed, "simclr-subset", name).choice(len(x), limit, replace=False))
        x = x[torch.from_numpy(keep).to(dev)]
    gen = loop.seed_everything(torch_seed(seed, "simclr", name))
    fp = fingerprint(job.code, "simclr", name, settings, str(public_path), seed)
    model = train_simclr(x, settings, gen, Resume(checkpoint, fp))
    save_encoder(model, out_model)
    clear_checkpoint(checkpoint)


def embed_images(images_u8: np.ndarray, settings: dict, model_paths, device: str) -> np.ndarray:
    """Embeddings of uint8 images with the encoder ``settings`` describes; ``model_paths`` lists the
    chain's fitted models, base first (HOG has none)."""

    kind, model_paths = settings["kind"], list(model_paths)
    if kind == "hog":
        return hog_encoder(images_u8, settings)
    if kind in ("umap", "scan"):
        features = embed_images(images_u8, settings["base"], model_paths[:-1], device)
        if kind == "scan":
            return scan_embed(load_scan(model_paths[-1]), features)
        return umap_embed(load_torch(model_paths[-1]), features)
    dev = loop.pick_device(device)
    return embed(loop.prepare(load_encoder(model_paths[-1]), dev), loop.to_device(images_u8, dev))


def embed_table(*, settings: dict, images_path, model_paths, device: str, threads: int, out_npy) -> None:
    """Embeddings of a table's images with a fitted encoder, row i = row i of the table: a party's own
    table (``embed_party``) or the public pool (``embed_public``).  A HOG encoder fits no model:
    :func:`pipelib.features.embed_hog` does its jobs without torch."""

    loop.set_threads(threads)
    _, images, _ = read_images(images_path)
    save_npy(embed_images(images, settings, model_paths, device), out_npy)
