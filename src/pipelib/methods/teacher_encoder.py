"""The teachers' frozen encoder of paper 004 (rule ldpdl_encoder): a CNN trained on the labelled train split
of another dataset than the owners' (the stand-in for the paper's ImageNet pre-training), its last map
pooled and projected on the source images' principal axes, and the teacher features of any image under it
or under HOG (:func:`encoder_features`).  Every feature is a function of its own image only."""

from __future__ import annotations

import logging

import numpy as np
import torch
import torch.nn.functional as F

from ..data.loaders import load_labelled
from ..features import hog_encoder, l2_normalize
from ..io import read_images
from ..job import Job
from ..seeding import rng, torch_seed
from ..train import loop
from ..train.checkpoint import Resume, clear_checkpoint, fingerprint, load_torch
from ..train.models import build
from ..train.supervised import Monitor, TrainSettings, model_from_state, save_model, train_supervised

log = logging.getLogger(__name__)


def flip_crop(x_u8: torch.Tensor) -> torch.Tensor:
    """A training batch in [-1, 1], each image shifted by up to 4 pixels (padded: reflected for colour
    images, background for grayscale) and, for colour images, flipped left-right at random (torch's
    global RNG, seeded by the job)."""
    x = loop.scale(x_u8)
    n, c, h, w = x.shape
    if c == 3:
        x = torch.where(torch.rand(n, 1, 1, 1, device=x.device) < 0.5, x.flip(3), x)
    padded = F.pad(x, (4, 4, 4, 4), mode="reflect") if c == 3 else F.pad(x, (4, 4, 4, 4), value=-1.0)
    i, j = torch.randint(0, 9, (2,)).tolist()  # one shift per batch: a crop of the padded batch
    return padded[:, :, i : i + h, j : j + w]


def train_extractor(job: Job, settings: dict) -> dict:
    """The teachers' encoder of one private dataset (rule ldpdl_encoder, a public job): ``settings.arch``
    trained with cross-entropy on the labelled train split of ``settings.source`` (input ``train``),
    another dataset than the owners' (config validation and the DAG boundary check hold to it), with
    flips and shifts, ``epochs`` x ``batch`` at Adam's ``lr``; then frozen, with the projection of its
    features (:func:`fit_projection`, on the same source images).  Out: the model (output ``model``:
    weights, projection, training history)."""
    dev = loop.start(job.threads, job.device, job.precision)
    x, y, meta = load_labelled(job.input["train"], dev)
    limit = settings.get("max_images", 0)
    if 0 < limit < len(x):  # a seeded subset (reduced presets)
        keep = np.sort(rng(job.seed, "teacher-encoder-subset", job["tdata"]).choice(len(x), limit, replace=False))
        x, y = x[torch.from_numpy(keep).to(dev)], y[torch.from_numpy(keep).to(dev)]
    classes, y = torch.unique(y, return_inverse=True)  # the source's classes, numbered 0..C-1
    train = TrainSettings.from_config(settings)
    gen = loop.seed_everything(torch_seed(job.seed, "teacher-encoder", job["tdata"]))
    model = loop.prepare(build(settings["arch"], x.shape[1:], len(classes)), dev)
    fp = fingerprint(job.code, "teacher-encoder", job["tdata"], settings, str(job.input["train"]), job.seed)
    history = train_supervised(
        model,
        torch.optim.Adam(model.parameters(), train.lr),
        (x, y),
        train,
        gen,
        Monitor(f"teachers' encoder ({meta['dataset']})"),
        objective=loop.Objective(prep=flip_crop),
        resume=Resume(job.checkpoint, fp),
    )
    maps = pooled_maps(model, x, int(settings["pool"]))
    projection = fit_projection(maps, int(settings["components"]))
    save_model(
        model,
        job.output["model"],
        source=meta["dataset"],
        classes=len(classes),
        history=history,
        pool=int(settings["pool"]),
        projection=projection,
    )
    clear_checkpoint(job.checkpoint)
    log.info(
        "teachers' encoder: %s on %d %s images of %d classes; %d features projected on %d components",
        settings["arch"],
        len(x),
        meta["dataset"],
        len(classes),
        maps.shape[1],
        len(projection["components"]),
    )
    return {"source": meta["dataset"], "images": len(x), "classes": len(classes), "history": history}


@torch.no_grad()
def pooled_maps(model: torch.nn.Module, x_u8: torch.Tensor, pool: int, batch: int = 512) -> torch.Tensor:
    """The last feature map of a frozen CNN (eval mode: each image's own), average-pooled to ``pool`` x
    ``pool`` cells and flattened, on the CPU."""
    model.eval()
    body = model.features[:-1] if isinstance(model.features[-1], torch.nn.Flatten) else model.features
    out = []
    for i in range(0, len(x_u8), batch):
        f = body(loop.scale(x_u8[i : i + batch]))
        out.append(F.adaptive_avg_pool2d(f.float(), pool).flatten(1).cpu())
    return torch.cat(out) if out else torch.zeros(0, 0)


def fit_projection(maps: torch.Tensor, components: int) -> dict:
    """The mean and the top ``components`` principal axes of the source images' pooled maps (float64
    SVD): features of any image are then its map's coordinates on them, a fixed linear map fitted on
    the source dataset only."""
    m = maps.double()
    mean = m.mean(0)
    _, _, vt = torch.linalg.svd(m - mean, full_matrices=False)
    return {"mean": mean.float(), "components": vt[: min(components, len(vt))].float()}


def extractor_features(images_u8: np.ndarray, model_path, hog=None) -> np.ndarray:
    """Features of uint8 (N, H, W, C) images under a frozen encoder of :func:`train_extractor`: the
    pooled last feature map projected on the source's principal axes, L2-normalised; with ``hog``
    (HOG settings) the image's HOG features beside them, each part of equal weight.  Each image's
    features depend on that image alone.  On the CPU: these jobs are small."""

    state = load_torch(model_path)
    model = model_from_state(state, torch.device("cpu"), where=str(model_path))
    maps = pooled_maps(model, loop.to_device(images_u8, torch.device("cpu")), state["pool"])
    proj = state["projection"]
    cnn = (
        l2_normalize(((maps - proj["mean"]) @ proj["components"].T).numpy())
        if len(maps)
        else np.zeros((0, len(proj["components"])), np.float32)
    )
    if hog is None:
        return cnn
    return l2_normalize(np.hstack([cnn, hog_encoder(images_u8, hog)])) if len(cnn) else np.zeros((0, 0), np.float32)


# --- the teachers' features (rules ldpdl_teachers, ldpdl_release and distill_votes) --------------------


def encoder_features(images: np.ndarray, settings: dict, model=None) -> np.ndarray:
    """Teacher features of uint8 images, each a function of its own image only: HOG (kind ``hog``,
    data-independent), or a frozen CNN trained on another labelled dataset, with HOG beside it where
    ``settings.hog`` says (kind ``transfer``: its ``model`` file, rule ldpdl_encoder; torch is imported
    only then)."""
    if settings["kind"] == "hog":
        return hog_encoder(images, settings)
    if settings["kind"] == "transfer":
        if model is None:
            raise ValueError("a transfer encoder's features need its model file (rule ldpdl_encoder)")
        return extractor_features(images, model, settings.get("hog"))
    raise ValueError(f"LDP-DL teachers need a hog or a transfer encoder; got kind {settings['kind']!r}")


def public_features(public_path, rows: np.ndarray, settings: dict, model=None) -> np.ndarray:
    """Teacher features of the public samples ``rows`` (row numbers of the public table)."""

    _, images, _ = read_images(public_path)
    return encoder_features(images[np.asarray(rows)], settings, model)
