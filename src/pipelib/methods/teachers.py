"""LDP-DL's and PATE's teachers (paper 004): one per data owner (or PATE teacher), a ridge-regression
head fitted on that owner's records only, with the softmax temperature that fits its own labels best,
on the features of a frozen encoder that holds none of the owners' data: HOG (data-independent), or a
CNN trained on another labelled dataset (:mod:`pipelib.methods.teacher_encoder`, rule ldpdl_encoder: the
stand-in for the paper's ImageNet pre-training).  PATE's own teachers (design ``S<n>``) are instead small CNNs
trained from scratch on their shards (:func:`train_cnn_teachers`).  The owners' job (rule
ldpdl_teachers); what the teachers answer, and how, is :mod:`pipelib.methods.ldpdl`."""

from __future__ import annotations

import logging
import time

import numpy as np
import torch
from torch.func import functional_call, vmap

from ..io import atomic_path, load_npy, read_images, read_json, read_rows, save_npy, write_json
from ..job import Job
from ..privacy import Draw, registry, release_row, soft_label, write_releases
from ..seeding import release_key, release_rng, torch_seed
from ..train import loop
from ..train.local_sgd import Client, LocalSGD, shuffles
from ..train.models import build
from .ldpdl import (
    METHOD,
    Owner,
    augment,
    holders,
    load_owners,
    owner_epsilons,
    owner_records,
    teacher_model,
    vote_counts,
)
from .pate import PateTeacher
from .teacher_encoder import encoder_features, public_features

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
        xb, yb = x[rows], onehot[rows]
        if n.min() < n.max():  # padding rows are zero: they add nothing
            xb.mul_(mask), yb.mul_(mask)
        gram = torch.bmm(xb.transpose(1, 2), xb).double() + torch.from_numpy(ridge * n[:, None, None] * penalty)
        # the penalised Gram matrix is positive definite (ridge > 0, the intercept's column is all ones):
        # Cholesky in float64, a tenth of a general batched solve's time
        chol, info = torch.linalg.cholesky_ex(gram)
        if info.any():
            raise ValueError(f"a teacher's normal equations are singular (ridge {ridge}): raise ldpdl.teacher.ridge")
        w = torch.cholesky_solve(torch.bmm(xb.transpose(1, 2), yb).double(), chol).float()
        scores = torch.bmm(xb, w)
        truth = yb.argmax(2)
        weights[lo : lo + len(sets)] = w.numpy()
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
    dev = loop.start(job.threads, job.device, job.precision)  # heads: CPU numpy/torch; CNN teachers: dev
    frames, images, meta = [], [], None
    for path in job.input["parties"]:
        frame, imgs, meta = read_images(path)
        frames.append(frame["label"].to_numpy().astype(np.int64))
        images.append(imgs)
    sizes = [len(f) for f in frames]
    labels, k = np.concatenate(frames), len(meta["task_classes"])
    sets = owner_records(design, sizes, records, seed, scenario)
    if "scratch" in settings:  # PATE's own teachers: CNNs from scratch, no encoder
        params, fit_acc = train_cnn_teachers(
            np.concatenate(images), labels, sets, k, settings["scratch"], seed, f"{scenario}/{design}", dev
        )
        save_cnn_teachers(job.output["teachers"], params, settings["scratch"]["arch"])
        n_features = 0
    else:
        features = encoder_features(np.concatenate(images), settings["encoder"], job.input.get("encoder"))
        weights, temps, fit_acc = fit_heads(features, labels, sets, k, float(settings["ridge"]))
        with atomic_path(job.output["teachers"]) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, weights=weights, temperatures=temps)
        n_features = int(features.shape[1])
    held = holders(sets, sum(sizes))
    info = {
        "design": design,
        "teachers": len(sets),
        "records_each": [int(min(map(len, sets))), int(max(map(len, sets)))],
        "pool_records": int(sum(sizes)),
        "party_sizes": sizes,
        "holders_per_record": {"min": int(held.min()), "mean": float(held.mean()), "max": int(held.max())},
        "fit_accuracy_mean": float(fit_acc.mean()),
        "features": n_features,
        "model": settings["scratch"]["arch"] if "scratch" in settings else "head",
        "teacher_model": teacher_model(settings),
        "seconds": time.perf_counter() - t0,
    }
    write_json(info, job.output["info"])
    log.info(
        "%d teachers (%s, %s) of %s records each on %d features: fit accuracy %.3f, %.0f s",
        len(sets),
        design,
        info["model"],
        info["records_each"],
        n_features,
        info["fit_accuracy_mean"],
        info["seconds"],
    )
    return info


# --- PATE's own teachers: small CNNs trained from scratch on disjoint shards (design S<n>) -------------


def train_cnn_teachers(images_u8, labels, record_sets: list, k: int, settings: dict, seed: int, key: str, device=None):
    """One CNN (``settings.arch``, a plain model: no normalization layers) per record set, trained from
    scratch on that set's rows only: ``epochs`` x minibatch SGD (``lr``, ``batch``), every teacher from
    the same data-independent initialisation (seeded by ``key``), its own keyed batch order.  Teachers of
    equal shard size train together, ``group`` at a time (:class:`pipelib.train.local_sgd.LocalSGD`:
    ``vmap`` over stacked weights; no operation mixes teachers).  Returns (name -> (teachers, ...) stacked
    float32 weights on the CPU, each teacher's accuracy on its own records).  On ``device``."""
    device = device or torch.device("cpu")
    x = loop.to_device(images_u8, device)
    y = torch.as_tensor(np.asarray(labels, dtype=np.int64), device=device)
    loop.seed_everything(torch_seed(seed, "pate-cnn-init", key))
    model = build(settings["arch"], x.shape[1:], k).to(device)
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    sgd = LocalSGD(model, float(settings["lr"]), int(settings["epochs"]), int(settings["batch"]), "vmap")
    out = {n: torch.zeros(len(record_sets), *p.shape) for n, p in start.items()}
    fit_acc = np.zeros(len(record_sets))
    by_size: dict[int, list[int]] = {}
    for i, r in enumerate(record_sets):
        by_size.setdefault(len(r), []).append(i)
    group = int(settings.get("group", 50))
    with loop.progress(sgd.epochs * sum(map(len, record_sets)), "PATE's CNN teachers"):
        for _, members in sorted(by_size.items()):
            for lo in range(0, len(members), group):
                ids = members[lo : lo + group]
                clients = [
                    Client(
                        i,
                        x[torch.from_numpy(record_sets[i]).to(device)],
                        y[torch.from_numpy(record_sets[i]).to(device)],
                    )
                    for i in ids
                ]
                params = sgd.train(start, clients, shuffles(seed, f"pate-cnn/{key}", 0, clients, sgd.epochs))
                for n, p in params.items():
                    out[n][ids] = p.detach().float().cpu()
                own = cnn_votes({n: p.detach() for n, p in params.items()}, settings["arch"], k, None, clients)
                fit_acc[ids] = [(v == c.y.cpu().numpy()).mean() for v, c in zip(own, clients)]
    return {n: p.numpy() for n, p in out.items()}, fit_acc


def cnn_votes(
    params: dict, arch: str, k: int, images_u8, clients=None, chunk: int = 50, batch: int = 256
) -> np.ndarray:
    """Each stacked CNN's predicted class (teachers x images) on ``images_u8`` (uint8 N, H, W, C), or, with
    ``clients``, each teacher on its own client's images (eval mode; ``vmap`` over ``chunk`` teachers and
    ``batch`` images at a time, so memory stays at chunk x batch images' activations)."""
    device = clients[0].x.device if clients else torch.device("cpu")
    params = {n: torch.as_tensor(p).to(device) for n, p in params.items()}
    teachers = len(next(iter(params.values())))
    x = loop.to_device(images_u8, device) if clients is None else None
    shape = (x if clients is None else clients[0].x).shape[1:]
    model = build(arch, shape, k).to(device).eval()
    out = []
    with torch.no_grad():
        for lo in range(0, teachers, chunk):
            part = {n: p[lo : lo + chunk] for n, p in params.items()}
            if clients is None:
                one = lambda w, xb: functional_call(model, w, (xb,))  # noqa: E731
                logits = torch.cat(
                    [vmap(one, in_dims=(0, None))(part, loop.scale(x[i : i + batch])) for i in range(0, len(x), batch)],
                    1,
                )
            else:
                own = torch.stack([c.x for c in clients[lo : lo + chunk]])  # (teachers, n, C, H, W)
                logits = torch.cat(
                    [
                        vmap(lambda w, xb: functional_call(model, w, (xb,)))(part, loop.scale(own[:, i : i + batch]))
                        for i in range(0, own.shape[1], batch)
                    ],
                    1,
                )
            out.append(logits.argmax(-1).cpu().numpy())
    return np.concatenate(out)


def save_cnn_teachers(path, params: dict, arch: str) -> None:
    """The teachers file of an ``S<n>`` design: every teacher's weights (``param/<name>``) and the arch."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, arch=np.array(arch), **{f"param/{n}": p for n, p in params.items()})


def load_cnn_teachers(path) -> tuple[dict, str]:
    """(stacked weights, arch) of :func:`save_cnn_teachers`."""
    with np.load(path) as f:
        return {n.removeprefix("param/"): f[n] for n in f.files if n.startswith("param/")}, str(f["arch"])


# --- the owners' answers (rules ldpdl_release and distill_votes) -------------------------------------


def release(job: Job, settings: dict, *, records: int) -> None:
    """Every owner's side of one iteration: each owner answers the queries the plan assigns to it with
    its own teacher only, at epsilon / its load, sanitized with its own release-keyed randomness.  Out:
    the sanitized answers (queries x N_Q x k, box scale), ledger rows (one per group of owners with the
    same answers and per-answer epsilon: the per-owner ledger is the student's owners.csv), and every
    pool record's epsilon spent in this release (summed over the owners that hold it): outputs
    ``release``, ``guarantee`` and ``records``.  The job's wildcards name the release."""

    release_id, seed, randomness, rule = job.release_id, job.seed, job.randomness, job.rule
    iteration, mechanism, scenario = int(job["iteration"]), job["ldmech"], job.scenario
    inp, out_release = job.input, job.output["release"]
    p = read_json(inp["plan"])
    info = read_json(inp["teachers_info"])
    queries = load_npy(inp["queries"])
    s = p["per_iteration"]
    slots = np.asarray(p["slots"])[(iteration - 1) * s : iteration * s]
    per_answer = owner_epsilons(p["total_epsilon"], np.asarray(p["loads"]))
    weights, temps = load_owners(inp["teachers"])
    features = public_features(inp["public"], queries, settings["encoder"], inp.get("encoder"))
    answers, spent = None, np.zeros(p["owners"])
    groups: dict = {}
    for owner in np.unique(slots):
        owner = int(owner)
        rows_, cols = np.nonzero(slots == owner)
        mech = registry.parse(f"{mechanism}-eps{float(per_answer[owner])!r}")
        if mech.locality != "soft-label":
            raise ValueError(f"{mechanism!r} is not a soft-label sanitizer")
        key = {**release_id, "owner": owner}
        out = Owner(owner, weights[owner], temps[owner]).answer(
            features[rows_], mech, release_rng(seed, randomness, rule, key)
        )
        if answers is None:
            answers = np.zeros((len(slots), slots.shape[1], out.shape[1]))
        answers[rows_, cols] = out
        spent[owner] = per_answer[owner] * len(rows_)
        groups.setdefault((len(rows_), float(per_answer[owner])), []).append(owner)
    rows = [
        release_row(
            METHOD,
            scenario,
            str(out_release),
            -1,
            mechanism,
            soft_label.owner_guarantee(mechanism, eps, n),
            # each owner's draw is keyed by its id; the row names the group: first owner + how many more
            drawn=Draw(randomness, release_key(rule, {**release_id, "owner": f"{group[0]}+{len(group) - 1}"})),
            n=n,
            seed=seed,
            owners=len(group),
            first_owner=group[0],
            pool_records=info["pool_records"],
        )
        for (n, eps), group in sorted(groups.items())
    ]
    sets = owner_records(job["design"], info["party_sizes"], records, seed, scenario)
    save_npy(answers, out_release)
    save_npy(holders(sets, info["pool_records"], spent), job.output["records"])
    write_releases(rows, job.output["guarantee"])


def teacher_votes(job: Job, settings: dict) -> np.ndarray:
    """PATE's teachers' job (rule distill_votes): every teacher of the design, each its own model only,
    votes for one class on each of the run's queries; out (``answers``): the (queries x classes) vote
    counts, for the trusted curator only.  Inputs: ``teachers`` and ``teachers_info`` (rule
    ldpdl_teachers), ``public``."""
    t = PateTeacher.of(job.release)
    idx = t.query_rows(read_rows(job.input["public"]), job.seed, job.scenario)
    if "scratch" in settings:  # PATE's own teachers: each CNN on the query images
        params, arch = load_cnn_teachers(job.input["teachers"])
        _, images, _ = read_images(job.input["public"])
        k = params["classifier.weight"].shape[1]  # (teachers, classes, hidden)
        votes = cnn_votes(params, arch, k, images[np.asarray(idx)])
    else:
        weights, temps = load_owners(job.input["teachers"])
        features = public_features(job.input["public"], idx, settings["encoder"], job.input.get("encoder"))
        votes = np.stack([Owner(i, weights[i], temps[i]).votes(features) for i in range(len(weights))])
        k = weights.shape[2]
    counts = vote_counts(votes, k)
    save_npy(counts, job.output["answers"])
    return counts
