"""LDP-DL's and PATE's teachers (paper 004): one per data owner (or PATE teacher), a ridge-regression
head on HOG features fitted on that owner's records only, with the softmax temperature that fits its
own labels best.  The owners' job (rule ldpdl_teachers); what the teachers answer, and how, is
:mod:`pipelib.methods.ldpdl`."""

from __future__ import annotations

import logging
import time

import numpy as np
import torch

from ..io import atomic_path, read_images, write_json
from ..job import Job
from ..train import loop
from .ldpdl import augment, encoder_features, holders, owner_records

log = logging.getLogger(__name__)


def fit_temperature(scores, truth, mask, steps: int = 12):
    """Per teacher, the softmax temperature T of its scores that maximises the likelihood of its own
    labels: Newton's method on beta = 1/T (the negative log-likelihood is convex in beta), beta kept in
    [1, 1e4].  ``scores``: teachers x rows x k; ``truth``: teachers x rows; ``mask``: 1 for real rows."""
    beta = torch.full((scores.shape[0], 1, 1), 10.0, dtype=torch.float64)
    s = scores.double()
    s_true = s.gather(2, truth[..., None])
    m = mask.double()
    for _ in range(steps):
        p = torch.softmax(beta * s, 2)
        mean = (p * s).sum(2, keepdim=True)
        grad = ((mean - s_true) * m).sum((1, 2))
        hess = (((p * s * s).sum(2, keepdim=True) - mean**2) * m).sum((1, 2)).clamp_min(1e-12)
        beta = (beta - (grad / hess)[:, None, None]).clamp(1.0, 1e4)
    return (1.0 / beta[:, 0, 0]).numpy()


def fit_heads(features: np.ndarray, labels: np.ndarray, record_sets: list, k: int, ridge: float, batch: int = 64):
    """One teacher per record set, each fitted on its own rows of (``features``, ``labels``) only.

    A teacher is a ridge least-squares fit of the one-hot label on the features and an intercept (the
    penalty ``ridge`` x its record count on every weight but the intercept's), then a softmax of its
    scores at the temperature that maximises the likelihood of its own labels (:func:`fit_temperature`).
    Batched: ``batch`` teachers' normal equations at a time; a teacher's result depends on its rows only.
    Returns (weights: teachers x (d + 1) x k float32, temperatures, accuracy on its own records)."""
    x = torch.from_numpy(augment(features))
    onehot = torch.nn.functional.one_hot(torch.as_tensor(np.asarray(labels, dtype=np.int64)), k).float()
    d = x.shape[1]
    weights = np.zeros((len(record_sets), d, k), np.float32)
    temps, fit_acc = np.zeros(len(record_sets)), np.zeros(len(record_sets))
    penalty = np.eye(d)
    penalty[-1, -1] = 0.0
    t0, every = time.perf_counter(), max(batch, len(record_sets) // 10 // batch * batch)
    for lo in range(0, len(record_sets), batch):
        if lo and lo % every == 0:
            took = time.perf_counter() - t0
            log.info(
                "teachers %d of %d fitted, %.0f s (about %.0f s left)",
                lo,
                len(record_sets),
                took,
                took * (len(record_sets) - lo) / lo,
            )
        sets = record_sets[lo : lo + batch]
        n = np.array([len(r) for r in sets])
        if (n < 1).any():
            raise ValueError("a teacher has no records")
        rows = torch.from_numpy(np.stack([np.pad(r, (0, n.max() - len(r))) for r in sets]).astype(np.int64))
        mask = torch.from_numpy(np.arange(n.max())[None, :] < n[:, None]).float()[..., None]
        xb, yb = x[rows].mul_(mask), onehot[rows].mul_(mask)  # padding rows are zero: they add nothing
        gram = torch.bmm(xb.transpose(1, 2), xb).double().numpy() + ridge * n[:, None, None] * penalty
        w = np.linalg.solve(gram, torch.bmm(xb.transpose(1, 2), yb).double().numpy()).astype(np.float32)
        scores = torch.bmm(xb, torch.from_numpy(w))
        truth = yb.argmax(2)
        weights[lo : lo + len(sets)] = w
        temps[lo : lo + len(sets)] = fit_temperature(scores, truth, mask)
        fit_acc[lo : lo + len(sets)] = ((scores.argmax(2) == truth).float() * mask[..., 0]).sum(1).numpy() / n
    return weights, temps, fit_acc


def train_teachers(job: Job, settings: dict, *, records: int) -> dict:
    """The owners' job: every owner's (or PATE teacher's) teacher, each fitted on its own records of the
    pool only (:func:`owner_records`, :func:`fit_heads`).  In: the parties' records (input ``parties``).
    Out: the teachers (private: only sanitized answers or, for PATE, the curator's votes leave) and a
    summary (counts only): outputs ``teachers`` and ``info``."""
    design, scenario, seed = job["design"], job.scenario, job.seed
    t0 = time.perf_counter()
    loop.set_threads(job.threads)
    frames, images, meta = [], [], None
    for path in job.input["parties"]:
        frame, imgs, meta = read_images(path)
        frames.append(frame["label"].to_numpy().astype(np.int64))
        images.append(imgs)
    sizes = [len(f) for f in frames]
    labels, k = np.concatenate(frames), len(meta["task_classes"])
    sets = owner_records(design, sizes, records, seed, scenario)
    features = encoder_features(np.concatenate(images), settings["encoder"])
    weights, temps, fit_acc = fit_heads(features, labels, sets, k, float(settings["ridge"]))
    with atomic_path(job.output["teachers"]) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, weights=weights, temperatures=temps)
    held = holders(sets, sum(sizes))
    info = {
        "design": design,
        "teachers": len(sets),
        "records_each": [int(min(map(len, sets))), int(max(map(len, sets)))],
        "pool_records": int(sum(sizes)),
        "party_sizes": sizes,
        "holders_per_record": {"min": int(held.min()), "mean": float(held.mean()), "max": int(held.max())},
        "fit_accuracy_mean": float(fit_acc.mean()),
        "features": int(features.shape[1]),
        "seconds": time.perf_counter() - t0,
    }
    write_json(info, job.output["info"])
    log.info(
        "%d teachers (%s) of %s records each on %d features: fit accuracy %.3f, %.0f s",
        len(sets),
        design,
        info["records_each"],
        features.shape[1],
        info["fit_accuracy_mean"],
        info["seconds"],
    )
    return info
