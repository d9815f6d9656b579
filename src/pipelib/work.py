"""The training work a job plans: image-passes by (architecture, input shape, batch), one function per kind
of training stage, and the data sizes they are computed from.  :mod:`pipelib.stages` names the function of
each rule; :mod:`pipelib.plan` turns the passes into time at the machine's measured throughput.

An image-pass is one image through one training step (forward and backward); evaluation and answers
(forward only) count a third.  A party's private set is read from its partition's summary when it exists;
before the first partition it is estimated from the dataset's size (the work says so: ``estimated``).
Light: no torch (Snakemake's DAG build imports it).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .design.ldpdl import teacher_settings
from .runs import FedmdRun, PateTeachers
from .settings import FedmdSettings, LdpdlSettings, LdpflSettings

# Offline copies' split sizes (../shared/data), used before a dataset is ingested; and image shapes.
SIZES = {
    "mnist": (60000, 10000),
    "fashion_mnist": (60000, 10000),
    "cifar10": (50000, 1000),
    "cifar100": (17000, 3400),
    "femnist": (14708, 4088),
    "femnist_letters": (2852, 1698),
}
SHAPES = {name: (3, 32, 32) if name.startswith("cifar") else (1, 28, 28) for name in SIZES}
FORWARD = 1 / 3  # a forward pass costs about a third of a training step


@dataclass
class Work:
    """Image-passes of one job, by (architecture, input shape, batch): what its time depends on."""

    rule: str = ""
    passes: dict = field(default_factory=dict)  # (arch, shape, batch[, group]) -> image-passes
    estimated: bool = False  # True when a party's size is guessed from the dataset

    def add(self, arch: str, shape, batch: int, n: float, group: int = 1) -> None:
        """``group`` > 1: models stepped together in one vmap call, each on its own batch (timed as such)."""
        key = (arch, tuple(shape), int(batch)) + ((int(group),) if group > 1 else ())
        self.passes[key] = self.passes.get(key, 0.0) + float(n)

    @property
    def total(self) -> float:
        return sum(self.passes.values())


@dataclass(frozen=True)
class Sizes:
    """The data sizes a plan reads: the merged ``config`` (with ``scenarios`` as the run uses them) and the
    results folder whose ingests and partitions give the real sizes once they exist."""

    config: dict
    results_dir: str

    def split(self, name: str) -> tuple[int, int]:
        """(train, test) images of dataset ``name``."""
        summary = Path(self.results_dir) / "data" / name / "summary.json"
        if summary.is_file():
            s = json.loads(summary.read_text())["splits"]
            return s["train"]["images"], s["test"]["images"]
        return SIZES[name]

    def scenario(self, name: str) -> dict:
        return self.config["scenarios"][name]

    def public(self, scenario: str) -> int:
        """The public pool of a scenario."""
        sc = self.scenario(scenario)
        rows = sc.get("public_rows", {"split": "train"})
        size = self.split(sc["public"])[0 if rows["split"] == "train" else 1]
        return min(size, rows.get("stop", size)) - rows.get("start", 0)

    def pool(self, scenario: str) -> int:
        """The records a scenario deals to its parties, before its partition exists (the private train
        split, or its pool_limit)."""
        sc = self.scenario(scenario)
        train = self.split(sc["private"])[0]
        return min(sc.get("pool_limit") or train, train)

    def parties(self, scenario: str) -> tuple[list[int], bool]:
        """Each party's private records (from the partition summary; else an estimate, flagged True)."""
        summary = Path(self.results_dir) / "partitions" / scenario / "summary.json"
        if summary.is_file():
            return json.loads(summary.read_text())["party_n"], False
        parties = self.scenario(scenario)["parties"]
        return [math.ceil(self.pool(scenario) / parties)] * parties, True

    def test(self, scenario: str) -> int:
        summary = Path(self.results_dir) / "partitions" / scenario / "summary.json"
        if summary.is_file():
            return json.loads(summary.read_text())["test"]["n"]
        return self.split(self.scenario(scenario)["private"])[1]


# ------------------------------------------------------------------------------- one function per stage
# Each takes the job's wildcards and the Sizes, and returns the job's Work.


def pretrain(wc: dict, sizes: Sizes) -> Work:
    """Pre-training on a public dataset's train split, scored on its test split every epoch
    (``epochs`` in the path: the budget ablation's pre-training)."""
    w, s = Work(), sizes.config["fedmd"]["pretrain"]
    s = {**s, "epochs": int(wc["epochs"])} if "epochs" in wc else s
    train, test = sizes.split(wc["public"])
    shape = SHAPES[wc["public"]]
    w.add(wc["arch"], shape, s["batch"], s["epochs"] * min(s["max_images"] or train, train))
    w.add(wc["arch"], shape, 1024, FORWARD * s["epochs"] * test)
    return w


def pretrain_pool(wc: dict, sizes: Sizes) -> Work:
    """Pre-training on a scenario's public pool, scored on its test split."""
    w, s, sc = Work(), sizes.config["fedmd"]["pretrain"], sizes.scenario(wc["scenario"])
    pool = sizes.public(wc["scenario"])
    shape = SHAPES[sc["public"]]
    w.add(wc["arch"], shape, s["batch"], s["epochs"] * min(s["max_images"] or pool, pool))
    w.add(wc["arch"], shape, 1024, FORWARD * s["epochs"] * sizes.test(wc["scenario"]))
    return w


def fedmd(wc: dict, sizes: Sizes) -> Work:
    """A FedMD row: every party's initial training, then each round's digest of the public queries, its
    revisit of its own records, its answers and its evaluation (``rounds`` and ``q`` in the path: the budget
    ablation's rounds and public queries per round; ``variant``: the loop ablation's, at its budget)."""
    w, f, sc = Work(), FedmdSettings.of(sizes.config, wc), sizes.scenario(wc["scenario"])
    shape = SHAPES[sc["public"]]
    ns, w.estimated = sizes.parties(wc["scenario"])
    run = FedmdRun.parse(wc["run"])
    test = sizes.test(wc["scenario"])
    s = f.schedule
    for arch, n in zip(f.party_archs(len(ns)), ns):
        n = run.k if run.kind == "nfdp" else n
        w.add(arch, shape, s.init_batch, s.init_epochs * n)
        w.add(arch, shape, s.digest_batch, s.rounds * s.digest_epochs * s.public_per_round)
        w.add(arch, shape, s.revisit_batch, s.rounds * s.revisit_epochs * n)
        w.add(arch, shape, s.predict_batch, FORWARD * (s.releases + (s.rounds + 1) * test))
    return w


def centralized(wc: dict, sizes: Sizes) -> Work:
    """The non-private baseline: epochs over the pooled private records."""
    w, s, sc = Work(), sizes.config["fedmd"]["centralized"], sizes.scenario(wc["scenario"])
    ns, w.estimated = sizes.parties(wc["scenario"])
    if "k" in wc:  # the pooled ceiling: the union of the parties' samples, for the path's epochs
        ns, s = [int(wc["k"])] * len(ns), {**s, "epochs": int(wc["epochs"])}
    w.add(wc["arch"], SHAPES[sc["private"]], s["batch"], s["epochs"] * sum(ns))
    return w


def _simclr(wc: dict, sizes: Sizes):
    """(settings, input shape, public images) of a SimCLR encoder; None for one that trains nothing (HOG, UMAP)."""
    enc = sizes.config["rknn"]["encoders"][wc["encoder"]]
    if enc["kind"] != "simclr":
        return None
    return enc, SHAPES[sizes.scenario(wc["scenario"])["public"]], sizes.public(wc["scenario"])


def train_encoder(wc: dict, sizes: Sizes) -> Work | None:
    """A SimCLR encoder's training: two augmented views of every (capped) public image, every epoch."""
    found = _simclr(wc, sizes)
    if found is None:
        return None
    (enc, shape, n), w = found, Work()
    w.add(enc["arch"], shape, enc["batch"], 2 * enc["epochs"] * min(enc.get("max_images") or n, n))
    return w


def embed_public(wc: dict, sizes: Sizes) -> Work | None:
    """A SimCLR encoder's pass over the public set."""
    found = _simclr(wc, sizes)
    if found is None:
        return None
    (enc, shape, n), w = found, Work()
    w.add(enc["arch"], shape, 1024, FORWARD * n)
    return w


def ldpdl_encoder(wc: dict, sizes: Sizes) -> Work:
    """The teachers' encoder: epochs over another dataset's train split."""
    w, enc = Work(), sizes.config["ldpdl"]["teacher"]["by_dataset"][wc["tdata"]]
    n = sizes.split(enc["source"])[0]
    w.add(enc["arch"], SHAPES[enc["source"]], enc["batch"], enc["epochs"] * min(enc.get("max_images") or n, n))
    return w


def _teacher_settings(sizes: Sizes, scenario: str, design: str) -> tuple[dict, dict]:
    """(the teachers' settings of ``design``, as their job gets them; the scenario)."""
    sc = sizes.scenario(scenario)
    return teacher_settings(sizes.config["ldpdl"], sc["private"], design), sc


def ldpdl_teachers(wc: dict, sizes: Sizes) -> Work | None:
    """The owners' teachers: PATE's own CNNs (design ``S<n>``: disjoint shards that cover the pool), every
    teacher's epochs over its shard, timed as their vmap groups step (``scratch.group`` at a time), and a pass
    to score it there; heads on a
    transfer encoder: the encoder's pass over the pool (fitting the heads is linear algebra, not counted);
    HOG heads: none."""
    settings, sc = _teacher_settings(sizes, wc["scenario"], wc["design"])
    ns, estimated = sizes.parties(wc["scenario"])
    w, pool, shape = Work(estimated=estimated), sum(ns), SHAPES[sc["private"]]
    if "scratch" in settings:
        s = settings["scratch"]
        w.add(s["arch"], shape, s["batch"], s["epochs"] * pool, min(int(s.get("group", 50)), int(wc["design"][1:])))
        w.add(s["arch"], shape, 1024, FORWARD * pool)
    elif settings["encoder"]["kind"] == "transfer":
        w.add(settings["encoder"]["arch"], shape, 1024, FORWARD * pool)
    else:
        return None
    return w


def distill_votes(wc: dict, sizes: Sizes) -> Work | None:
    """PATE's teachers voting on the queries: every CNN of an ``S<n>`` design on each query; heads on a
    transfer encoder: the encoder's pass over the queries; HOG heads: none."""
    t = PateTeachers.parse(wc["teacher"])
    settings, sc = _teacher_settings(sizes, wc["scenario"], t.design)
    w, shape = Work(), SHAPES[sc["public"]]
    if "scratch" in settings:
        w.add(settings["scratch"]["arch"], shape, 1024, FORWARD * int(t.design[1:]) * t.queries)
    elif settings["encoder"]["kind"] == "transfer":
        w.add(settings["encoder"]["arch"], shape, 1024, FORWARD * t.queries)
    else:
        return None
    return w


def rknn_student(wc: dict, sizes: Sizes) -> Work:
    """Reverse k-NN's student: epochs over the labelled public set, evaluated every epoch."""
    w, s, sc = Work(), sizes.config["rknn"]["student"], sizes.scenario(wc["scenario"])
    shape = SHAPES[sc["public"]]
    w.add(s["arch"], shape, s["batch"], s["epochs"] * sizes.public(wc["scenario"]))
    w.add(s["arch"], shape, 1024, FORWARD * s["epochs"] * sizes.test(wc["scenario"]))
    return w


def distill_student(wc: dict, sizes: Sizes) -> Work:
    """The distillation stage's student: reverse k-NN's, or PATE's (LDP-DL's student on S x T queries)."""
    return (ldpdl_student if wc["teacher"].startswith("pate-") else rknn_student)(wc, sizes)


def ldpdl_student(wc: dict, sizes: Sizes) -> Work:
    """An LDP-DL (or PATE) student: an AQS iteration t trains on t x S queries and scores the public pool
    for the next; a run without AQS (and PATE) trains on all S x T at once."""
    w, s, sc = Work(), LdpdlSettings.of(sizes.config), sizes.scenario(wc["scenario"])
    shape, aqs = SHAPES[sc["public"]], wc.get("qs") == "aqs"
    per_iteration, _ = s.shape("aqs" if aqs else "random")
    queries = int(wc["iteration"]) * per_iteration if aqs else per_iteration
    w.add(s.student_arch, shape, s.student_batch, s.student_epochs * queries)
    w.add(
        s.student_arch,
        shape,
        1024,
        FORWARD * (sizes.test(wc["scenario"]) + (sizes.public(wc["scenario"]) if aqs else 0)),
    )
    return w


def ldpdl_ceiling(wc: dict, sizes: Sizes) -> Work:
    """Paper 004's noise-free reference: the LDP-DL student on S x T queries with their true labels."""
    w, s, sc = Work(), LdpdlSettings.of(sizes.config), sizes.scenario(wc["scenario"])
    shape = SHAPES[sc["public"]]
    w.add(s.student_arch, shape, s.student_batch, s.student_epochs * s.all_queries)
    w.add(s.student_arch, shape, 1024, FORWARD * sizes.test(wc["scenario"]))
    return w


def dpsgd(wc: dict, sizes: Sizes) -> Work:
    """DP-SGD: epochs over the pooled records (counted as plain training passes)."""
    w, d, sc = Work(), sizes.config["dpsgd"], sizes.scenario(wc["scenario"])
    ns, w.estimated = sizes.parties(wc["scenario"])
    w.add(wc["arch"], SHAPES[sc["private"]], d["batch"], d["epochs"] * sum(ns))
    return w


def ldpfl(wc: dict, sizes: Sizes) -> Work:
    """An LDP-FL run: the selected clients' local epochs every round (timed as one client's steps), and an
    evaluation per round."""
    w, sc = Work(), sizes.scenario(wc["scenario"])
    s = LdpflSettings.of(sizes.config, wc["scenario"])
    ns, w.estimated = sizes.parties(wc["scenario"])
    rounds, per_round = int(wc["rounds"]), max(1, round(float(wc["frac"]) * len(ns)))
    arch, shape = s.arch, SHAPES[sc["private"]]
    w.add(arch, shape, s.batch, rounds * per_round * s.local_epochs * sum(ns) / len(ns))
    w.add(arch, shape, 1024, FORWARD * (rounds + 1) * sizes.test(wc["scenario"]))
    return w
