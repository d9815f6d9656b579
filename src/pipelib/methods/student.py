"""The server's student, shared by the distillation methods: a model trained from scratch on public
samples labelled from privatized answers only (paper 003's reverse k-NN labels, paper 004's LDP-DL
soft labels with Eq. 4, PATE's noisy argmax), its test accuracy and its result row, which carries the
guarantee of the releases behind the labels.  The rules distill_student (reverse k-NN and PATE) and
ldpdl_student; the answers and releases are :mod:`pipelib.methods.distill`, :mod:`pipelib.methods.pate`
and :mod:`pipelib.methods.ldpdl`, which stay free of torch."""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from ..data.loaders import load_labelled, load_public
from ..io import load_npy, read_json, read_table, save_npy, write_csv, write_json
from ..job import Job
from ..privacy import NO_PRIVACY, Guarantee, delta_vacuous, read_releases, registry
from ..runs import PateTeachers
from ..schema import result_row
from ..seeding import rng, torch_seed
from ..train import loop
from ..train.checkpoint import Resume, clear_checkpoint, fingerprint
from ..train.models import build, optimizer
from ..train.supervised import Monitor, TrainSettings, save_model, train_supervised
from .distill import METHOD_NAMES, teacher
from .ldpdl import (
    METHOD,
    answer_epsilon_range,
    least_confident,
    owner_guarantee_of,
    owner_ledger,
    random_queries,
    run_keys,
    server_targets,
)
from .rknn import cluster_purity


def kd_loss(alpha: float, beta: float, tau: float):
    """Paper 004 Eq. 4 on probability targets p (the aggregated soft labels, read as logits log p):
    alpha H(p, softmax(z_s)) + beta H(softmax(log p / tau), softmax(z_s / tau))."""

    def loss(logits, target):
        hard = -(target * F.log_softmax(logits, 1)).sum(1)
        sharpened = F.softmax(torch.log(target.clamp_min(1e-12)) / tau, 1)
        soft = -(sharpened * F.log_softmax(logits / tau, 1)).sum(1)
        return (alpha * hard + beta * soft).mean()

    return loss


def distill_student(
    job: Job, settings: dict, *, teacher_spec: str, label_accuracy: bool = True, loss: dict | None = None
) -> dict:
    """The server trains a student on the privately labelled public set; its result row carries the
    guarantee of the releases behind the labels, Acc_pl (label accuracy) and Acc_pc (test accuracy).
    PATE's teachers: the student of LDP-DL (:func:`pate_student`, Eq. 4 with ``loss``) on the queried rows."""
    t = teacher(teacher_spec)
    if t.kind == "pate":
        return pate_student(job, settings, loss)
    scenario, seed, checkpoint = job.scenario, job.seed, job.checkpoint
    labels_path, public_path = job.input["labels"], job.input["public"]
    dev = loop.start(job.threads, job.device, job.precision)
    labels = read_table(labels_path).to_pandas()
    summary = read_json(job.input["summary"])
    x_pub, pub_meta = load_public(public_path, dev)
    x_test, y_test, meta = load_labelled(job.input["test"], dev)
    y_pub = torch.as_tensor(labels["label"].to_numpy().astype(np.int64), device=dev)
    acc_pl = purity = None
    if label_accuracy:  # evaluation only: the public set's true labels, in the same label space
        truth = read_table(public_path, columns=["label"]).column("label").to_numpy()
        acc_pl = float((labels["label"].to_numpy() == truth).mean())
        # one label per cluster: label accuracy is at most the clusters' purity
        purity = cluster_purity(labels["cluster"].to_numpy(), truth.astype(np.int64))
    gen = loop.seed_everything(torch_seed(seed, "student"))
    model = loop.prepare(build(settings["arch"], x_pub.shape[1:], len(meta["task_classes"])), dev)
    train = TrainSettings.from_config(settings)
    t0 = time.perf_counter()
    train_supervised(
        model,
        optimizer(model, train.lr),
        (x_pub, y_pub),
        train,
        gen,
        Monitor("student", lambda m: {"test_accuracy": loop.accuracy(m, x_test, y_test)}),
        resume=Resume(checkpoint, fingerprint(job.code, "student", str(labels_path), settings, seed)),
    )
    save_model(model, job.output["model"], scenario=scenario, teacher=teacher_spec, mechanism=summary["mechanism"])
    guarantee = Guarantee.from_row(summary["guarantee"])
    row = result_row(
        guarantee,
        method=METHOD_NAMES[t.kind],
        scenario=scenario,
        public_dataset=pub_meta["dataset"],
        private_dataset=meta["dataset"],
        mechanism=registry.parse(summary["mechanism"]).name,
        delta_vacuous=delta_vacuous(guarantee.delta, summary["records"]),
        accuracy=loop.accuracy(model, x_test, y_test),
        label_accuracy=acc_pl,
        cluster_purity=purity,
        n=summary["records"],
        randomness=summary["randomness"],
        parties=None,
        teacher=teacher_spec,
        encoder=t.encoder,
        s=t.s,
        k=t.k,
        queries=int(labels["cluster"].max() + 1),
        public_n=len(x_pub),
        test_n=len(x_test),
        wall_seconds=time.perf_counter() - t0,
        **loop.where(dev),
        seed=seed,
        preset=job.preset,
    )
    write_json(row, job.output["result"])
    clear_checkpoint(checkpoint)
    return row


class ServerStudent:
    """The server's side of a run: the public and test images, a student trained from scratch on the
    queried public samples with Eq. 4, and its result row.  Shared by LDP-DL and PATE."""

    def __init__(self, job: Job, settings: dict, loss: dict):
        """The job's inputs ``public`` and ``test``, on the job's device and threads."""
        self.t0 = time.perf_counter()
        self.dev = loop.start(job.threads, job.device, job.precision)
        self.public_path, self.settings, self.loss = job.input["public"], settings, loss
        self.x_pub, self.pub_meta = load_public(self.public_path, self.dev)
        self.x_test, self.y_test, self.meta = load_labelled(job.input["test"], self.dev)

    def fit(self, idx: np.ndarray, targets: np.ndarray, seed: int, name: str):
        """A student from scratch on (public samples ``idx``, target distributions ``targets``)."""
        self.idx, self.targets = np.asarray(idx), np.asarray(targets, dtype=np.float64)
        gen = loop.seed_everything(seed)
        x = self.x_pub[torch.as_tensor(self.idx, device=self.dev)]
        model = loop.prepare(build(self.settings["arch"], x.shape[1:], len(self.meta["task_classes"])), self.dev)
        train = TrainSettings.from_config(self.settings)
        y = torch.as_tensor(self.targets.astype(np.float32), device=self.dev)
        loss = kd_loss(float(self.loss["alpha"]), float(self.loss["beta"]), float(self.loss["tau"]))
        train_supervised(
            model, optimizer(model, train.lr), (x, y), train, gen, Monitor(name), objective=loop.Objective(loss)
        )
        self.model = model
        return model

    def probabilities(self) -> np.ndarray:
        """The student's softmax on every public sample (active query sampling)."""
        return torch.softmax(loop.predict(self.model, self.x_pub), 1).cpu().numpy()

    def row(self, guarantee, *, method: str, scenario: str, mechanism: str, n: int, seed: int, preset: str, **extra):
        """The result row: test accuracy, label accuracy of the targets (evaluation only: the public
        table's true labels), the guarantee, and ``extra`` columns."""
        truth = read_table(self.public_path, columns=["label"]).column("label").to_numpy()[self.idx]
        return result_row(
            guarantee,
            method=method,
            scenario=scenario,
            public_dataset=self.pub_meta["dataset"],
            private_dataset=self.meta["dataset"],
            mechanism=mechanism,
            delta_vacuous=delta_vacuous(guarantee.delta, n),
            accuracy=loop.accuracy(self.model, self.x_test, self.y_test),
            label_accuracy=float((self.targets.argmax(1) == truth).mean()),
            n=n,
            queries=len(self.idx),
            public_n=len(self.x_pub),
            test_n=len(self.x_test),
            wall_seconds=time.perf_counter() - self.t0,
            **loop.where(self.dev),
            seed=seed,
            preset=preset,
            **extra,
        )


def ldpdl_student(job: Job, settings: dict, loss: dict) -> dict:
    """The server, one AQS iteration: targets from the sanitized answers of iterations 1..t, a student
    trained from scratch on every sample queried so far, its test accuracy, and the next iteration's
    queries (the S least confident samples under this student with AQS, else S at random).  Inputs: the
    plan, and per iteration so far its queries, releases, guarantees and records; outputs: result,
    next, model, owners."""
    run, seed, inp, out = run_keys(job.release), job.seed, job.input, job.output
    iteration, aqs = int(job["iteration"]), job["qs"] == "aqs"
    p = read_json(inp["plan"])
    idx = np.concatenate([load_npy(q) for q in inp["queries"]])
    targets = np.concatenate([server_targets(load_npy(r)) for r in inp["releases"]])
    server = ServerStudent(job, settings, loss)
    server.fit(
        idx, targets, torch_seed(seed, "ldpdl-student", run["key"], iteration), f"student, iteration {iteration}"
    )
    available = np.setdiff1d(np.arange(len(server.x_pub)), idx)
    s = min(p["per_iteration"], len(available))
    if aqs:
        nxt = least_confident(server.probabilities(), available, s)
    else:
        nxt = random_queries(available, s, rng(seed, "ldpdl-queries", run["plan_key"], iteration + 1))
    save_npy(nxt, out["next"])
    ledger = owner_ledger(p, iteration, run["mechanism"])
    write_csv(ledger, out["owners"])
    guarantee = owner_guarantee_of(ledger.loc[ledger["epsilon"].idxmax()].to_dict())
    per_answer = answer_epsilon_range(ledger)
    pool = int(read_releases(inp["guarantees"][0])[0]["pool_records"])
    per_record = np.sum([load_npy(r) for r in inp["records"]], axis=0)
    row = server.row(
        guarantee,
        method=METHOD,
        scenario=run["scenario"],
        mechanism=run["mechanism"],
        n=pool,
        seed=seed,
        preset=job.preset,
        parties=p["owners"],
        owners=p["owners"],
        per_query=p["per_query"],
        aqs=bool(aqs),
        iteration=iteration,
        iterations=p["iterations"],
        total_epsilon=p["total_epsilon"],
        # owners answer at epsilon / their own load: the busiest owner's (smallest) and the least busy one's
        per_answer_epsilon=per_answer[0],
        per_answer_epsilon_max=per_answer[1],
        max_answers=int(ledger["answers"].max()),
        answer_cap=p["cap"],
        owner_design=run["design"],
        epsilon_owner=guarantee.epsilon,
        epsilon_teacher_data=guarantee.epsilon,  # one teacher per owner, fitted on its records only
        epsilon_record=float(per_record.max()),
        mean_answers_paper=p["per_iteration"] * p["iterations"] * p["per_query"] / p["owners"],
        randomness=job.randomness,
    )
    write_json(row, out["result"])
    save_model(server.model, out["model"], scenario=run["scenario"], mechanism=run["mechanism"], iteration=iteration)
    return row


def ldpdl_ceiling(job: Job, settings: dict, loss: dict, queries: int) -> dict:
    """Paper 004's noise-free reference (evaluation only, no guarantee spent): the server's student trained
    as LDP-DL's on ``queries`` public samples drawn at random, each with its true label (what perfect answers
    would give; reads the public pool's labels, as label accuracy does).  Inputs: public, test; output:
    result."""
    server = ServerStudent(job, settings, loss)
    truth = read_table(server.public_path, columns=["label"]).column("label").to_numpy().astype(np.int64)
    idx = random_queries(
        np.arange(len(server.x_pub)), min(queries, len(server.x_pub)), rng(job.seed, "ldpdl-ceiling", job.scenario)
    )
    k = len(server.meta["task_classes"])
    server.fit(
        idx, np.eye(k)[truth[idx]], torch_seed(job.seed, "ldpdl-ceiling", job.scenario), "student on true labels"
    )
    row = server.row(
        NO_PRIVACY,
        method="student on true labels",
        scenario=job.scenario,
        mechanism="none",
        n=len(idx),
        seed=job.seed,
        preset=job.preset,
        randomness=job.randomness,
    )
    write_json(row, job.output["result"])
    return row


def pate_student(job: Job, settings: dict, loss: dict) -> dict:
    """The server: a student on PATE's noisy labels of the queried public rows (one-hot targets: Eq. 4's
    two terms are then the cross-entropy with the noisy label at temperatures 1 and tau), trained as
    LDP-DL's.  Inputs: labels (rule distill_label), the curator's release record (``guarantee``), public,
    test; outputs: result, model."""
    scenario, seed = job.scenario, job.seed
    teachers = PateTeachers.of(job.release)
    labels = read_table(job.input["labels"]).to_pandas()
    server = ServerStudent(job, settings, loss)
    server.fit(
        labels["row"].to_numpy(),
        np.eye(len(server.meta["task_classes"]))[labels["label"].to_numpy().astype(np.int64)],
        torch_seed(seed, "pate-student", scenario),
        "PATE student",
    )
    (g,) = read_releases(job.input["guarantee"])
    row = server.row(
        Guarantee.from_row(g),
        method=METHOD_NAMES["pate"],
        scenario=scenario,
        mechanism=g["mechanism"],
        n=int(g["n"]),
        seed=seed,
        preset=job.preset,
        parties=g["owners"],
        owners=g["owners"],
        owner_design=teachers.design,
        epsilon_record=float(g["epsilon"]),  # every record is in one teacher's shard
        sigma=g["sigma"],
        randomness=job.randomness,
    )
    write_json(row, job.output["result"])
    save_model(server.model, job.output["model"], scenario=scenario, mechanism=g["mechanism"])
    return row
