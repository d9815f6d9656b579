"""LDP-DL's and PATE's teachers (paper 004): one per data owner (or PATE teacher), a ridge-regression
head fitted on that owner's records only, with the softmax temperature that fits its own labels best,
on the features of a frozen encoder that holds none of the owners' data: HOG (data-independent), or a
CNN trained on another labelled dataset (:func:`train_extractor`, rule ldpdl_encoder: the stand-in for
the paper's ImageNet pre-training).  PATE's own teachers (design ``S<n>``) are instead small CNNs
trained from scratch on their shards (:func:`train_cnn_teachers`).  The owners' job (rule
ldpdl_teachers); what the teachers answer, and how, is :mod:`pipelib.methods.ldpdl`."""

from __future__ import annotations

import logging
import time

import numpy as np
import torch
import torch.nn.functional as F

from ..data.loaders import load_labelled
from ..features import hog_encoder, l2_normalize
from ..io import atomic_path, load_npy, read_images, read_json, read_rows, save_npy, write_json
from ..job import Job
from ..privacy import Draw, registry, release_row, soft_label, write_releases
from ..seeding import release_key, release_rng, rng, torch_seed
from ..train import loop
from ..train.checkpoint import Resume, clear_checkpoint, fingerprint, load_torch
from ..train.models import build
from ..train.supervised import Monitor, TrainSettings, model_from_state, save_model, train_supervised
from .ldpdl import (
    METHOD,
    Owner,
    augment,
    holders,
    load_owners,
    owner_epsilons,
    owner_records,
    vote_counts,
)
from .ldpfl import Client, LocalSGD, shuffles
from .pate import PateTeacher

log = logging.getLogger(__name__)


def describe(settings: dict) -> str:
    """The teachers of ``settings`` (:meth:`pipelib.design.Design.teacher_settings`) in words."""
    if "scratch" in settings:
        c = settings["scratch"]
        return f"{c['arch']} from scratch ({c['epochs']} epochs)"
    e = settings["encoder"]
    if e.get("kind") == "transfer":
        return f"ridge heads on a frozen {e['arch']} trained on {e['source']} (+ HOG)"
    return f"ridge heads on {e.get('kind', 'hog').upper()} features"


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
    loop.set_threads(job.threads)
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
            np.concatenate(images), labels, sets, k, settings["scratch"], seed, f"{scenario}/{design}"
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
        "teacher_model": describe(settings),
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


def train_cnn_teachers(images_u8, labels, record_sets: list, k: int, settings: dict, seed: int, key: str):
    """One CNN (``settings.arch``, a plain model: no normalization layers) per record set, trained from
    scratch on that set's rows only: ``epochs`` x minibatch SGD (``lr``, ``batch``), every teacher from
    the same data-independent initialisation (seeded by ``key``), its own keyed batch order.  Teachers of
    equal shard size train together, ``group`` at a time (:class:`pipelib.methods.ldpfl.LocalSGD`:
    ``vmap`` over stacked weights; no operation mixes teachers).  Returns (name -> (teachers, ...) stacked
    float32 weights, each teacher's accuracy on its own records)."""
    x = loop.to_device(images_u8, torch.device("cpu"))
    y = torch.as_tensor(np.asarray(labels, dtype=np.int64))
    loop.seed_everything(torch_seed(seed, "pate-cnn-init", key))
    model = build(settings["arch"], x.shape[1:], k)
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
                    Client(i, x[torch.from_numpy(record_sets[i])], y[torch.from_numpy(record_sets[i])]) for i in ids
                ]
                params = sgd.train(start, clients, shuffles(seed, f"pate-cnn/{key}", 0, clients, sgd.epochs))
                for n, p in params.items():
                    out[n][ids] = p.detach().float()
                own = cnn_votes({n: p.detach() for n, p in params.items()}, settings["arch"], k, None, clients)
                fit_acc[ids] = [(v == c.y.numpy()).mean() for v, c in zip(own, clients)]
    return {n: p.numpy() for n, p in out.items()}, fit_acc


def cnn_votes(params: dict, arch: str, k: int, images_u8, clients=None, chunk: int = 50) -> np.ndarray:
    """Each stacked CNN's predicted class (teachers x images) on ``images_u8`` (uint8 N, H, W, C), or, with
    ``clients``, each teacher on its own client's images (eval mode; ``vmap`` over ``chunk`` teachers)."""
    from torch.func import functional_call, vmap

    params = {n: torch.as_tensor(p) for n, p in params.items()}
    teachers = len(next(iter(params.values())))
    if clients is None:
        x = loop.scale(loop.to_device(images_u8, torch.device("cpu")))
        shape = x.shape[1:]
    else:
        shape = clients[0].x.shape[1:]
    model = build(arch, shape, k).eval()
    out = []
    with torch.no_grad():
        for lo in range(0, teachers, chunk):
            part = {n: p[lo : lo + chunk] for n, p in params.items()}
            if clients is None:
                logits = vmap(lambda w: functional_call(model, w, (x,)))(part)
            else:
                xs = torch.stack([loop.scale(c.x) for c in clients[lo : lo + chunk]])
                logits = vmap(lambda w, xb: functional_call(model, w, (xb,)))(part, xs)
            out.append(logits.argmax(-1).numpy())
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


# --- the teachers' encoder: a CNN trained on labelled data that is none of the owners' -----------------


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


# --- the owners' features and answers (rules ldpdl_release and distill_votes) -------------------------


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


def release(job: Job, settings: dict, *, records: int) -> None:
    """Every owner's side of one iteration: each owner answers the queries the plan assigns to it with
    its own teacher only, at epsilon / its load, sanitized with its own release-keyed randomness.  Out:
    the sanitized answers (queries x N_Q x k, box scale), ledger rows (one per group of owners with the
    same answers and per-answer epsilon: the per-owner ledger is the student's owners.csv), and every
    pool record's epsilon spent in this release (summed over the owners that hold it): outputs
    ``release``, ``guarantee`` and ``records``.  The job's wildcards name the release."""

    release_id, seed, randomness, rule = job.release, job.seed, job.randomness, job.rule
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
