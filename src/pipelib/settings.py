"""Typed, frozen settings of the methods whose settings depend on a job's path: FedMD (answer type, budget
point, loop variant), LDP-FL (the dataset's entry) and LDP-DL (queries and iterations).

Each is built once from the validated config, and read alike by the method's job and by its planned work
(pipelib.work).  A rule passes the plain mapping (``fedmd_params``, ``ldpfl_params``) and its job parses it
back (``parse``): Snakemake notices a changed param only when it is a builtin value (its
metadata keeps the repr), so an object as a param would let a changed knob re-run nothing.  Torch-free: the
plan and the report jobs import it.  It imports no other pipelib module: FedMD's and LDP-FL's jobs run it, and
their code digest covers what it imports (the config module would re-run them at every edit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

VARIANT = r"-(n[0-9]+|canaries-[a-z]+|s[1-9][0-9]*)$"  # what a variant adds to its scenario's name
# a loop-ablation variant's keys that choose its rows and inputs rather than FedMD's settings
ABLATION_SCOPE = ("name", "k", "datasets", "sampling")

# FedMD's loop choices (config.schema.yaml lists them too): one Adam for every phase, or one for digesting and
# one for the party's own records (FedMD's code compiles two Keras models over shared layers, each with its
# own Adam); the outputs a party answers and digests: all (public classes and the task's, as FedMD) or the
# private task's only.
OPTIMIZERS = ("shared", "per_phase")
ANSWER_OUTPUTS = ("all", "task")
# the fedmd section's keys that act through their own files or rules, not a FedMD row's settings
FEDMD_ELSEWHERE = ("pretrain", "centralized", "runtime", "compare")


def _known(mapping: dict, where: str, *classes) -> None:
    """Refuse a key that is no field of ``classes`` (a nested dataclass field is not a key itself)."""
    allowed = {f.name for c in classes for f in fields(c) if f.name != "schedule"}
    unknown = sorted(set(mapping) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown setting(s) {', '.join(unknown)}")


@dataclass(frozen=True)
class Schedule:
    """FedMD's Algorithm 1 knobs."""

    rounds: int  # R
    public_per_round: int  # |X_p| per round
    init_epochs: int  # T1
    digest_epochs: int  # T2
    revisit_epochs: int  # T3
    init_batch: int
    digest_batch: int
    revisit_batch: int
    predict_batch: int = 1024
    optimizers: str = "shared"  # one Adam for every phase, or per_phase: digest's and own-records' (FedMD's code)
    answer_outputs: str = "all"  # what is answered and digested: all outputs, or the private task's only
    bn_momentum: float = 0.1  # BatchNorm running-statistics momentum in the loop (PyTorch 0.1; Keras 0.01)

    def __post_init__(self):
        for name, value, allowed in (
            ("optimizers", self.optimizers, OPTIMIZERS),
            ("answer_outputs", self.answer_outputs, ANSWER_OUTPUTS),
        ):
            if value not in allowed:
                raise ValueError(f"fedmd.{name} = {value!r}; allowed: {', '.join(allowed)}")

    @property
    def releases(self) -> int:
        """Answer vectors one party releases over a run: R rounds of |X_p| queries (the last round's answers
        are never sent)."""
        return self.rounds * self.public_per_round


@dataclass(frozen=True)
class FedmdSettings:
    """One FedMD job's settings: its schedule, the parties' architectures (cycled), answer type and optimizer."""

    schedule: Schedule
    architectures: tuple[str, ...]
    answer: str
    lr: float
    device: str = "auto"
    precision: str = "fp32"
    threads: int = 1

    @classmethod
    def parse(cls, mapping: dict) -> FedmdSettings:
        """From the mapping its rule passes (``fedmd_params``); an unknown key is an error."""
        _known(mapping, "fedmd", cls, Schedule)
        sched = {f.name for f in fields(Schedule)}
        own = {k: v for k, v in mapping.items() if k not in sched}
        schedule = Schedule(**{k: v for k, v in mapping.items() if k in sched})
        return cls(schedule=schedule, **{**own, "architectures": tuple(mapping["architectures"])})

    @classmethod
    def of(cls, config: dict, wildcards: dict) -> FedmdSettings:
        return cls.parse(fedmd_params(config, wildcards))

    def party_archs(self, parties: int) -> list[str]:
        """Each party's architecture: the list, cycled (party i trains architectures[i mod its length])."""
        return party_archs(list(self.architectures), parties)


def party_archs(architectures: list[str], parties: int) -> list[str]:
    """Each party's architecture: FedMD's list, cycled (party i trains architectures[i mod its length])."""
    return [architectures[i % len(architectures)] for i in range(parties)]


def fedmd_params(config: dict, wildcards: dict) -> dict:
    """FedMD's settings of one job as its rule's params: the preset's ``fedmd`` (less what acts through its
    own files: pre-training, the centralized baseline, runtime, compare) with its path's answer type; at its
    path's budget point (``rounds``, ``q``: the budget ablation); or at the loop ablation's budget with the
    overrides of its path's ``variant``.  The one place a budget or a variant overrides FedMD's settings."""
    f = config["fedmd"]
    settings = {k: v for k, v in f.items() if k not in FEDMD_ELSEWHERE}
    if "answer" in wildcards:
        settings["answer"] = wildcards["answer"]
    if "rounds" in wildcards:
        settings.update(rounds=int(wildcards["rounds"]), public_per_round=int(wildcards["q"]))
    if "variant" in wildcards:
        ablation = config["paper002"]["ablation"]
        variant = next(v for v in ablation["variants"] if v["name"] == wildcards["variant"])
        settings.update(rounds=ablation["budget"][0], public_per_round=ablation["budget"][1])
        settings.update({k: v for k, v in variant.items() if k not in ABLATION_SCOPE})
    return settings


@dataclass(frozen=True)
class LdpflSettings:
    """One LDP-FL run's training settings: ``ldpfl``'s, overridden by its dataset's entry."""

    arch: str
    lr: float
    device: str = "auto"
    mode: str = "auto"
    group: int = 100
    batch: int = 10
    local_epochs: int = 1
    adaptive_range: str = "projected"
    init: str = "torch"

    @classmethod
    def parse(cls, mapping: dict) -> LdpflSettings:
        _known(mapping, "ldpfl", cls)
        return cls(**mapping)

    @classmethod
    def of(cls, config: dict, scenario: str) -> LdpflSettings:
        return cls.parse(ldpfl_params(config, scenario))


def ldpfl_dataset(config: dict, scenario: str) -> tuple[str, dict]:
    """The ``ldpfl.datasets`` entry (label, settings) of a scenario or of one of its variants; for a
    scenario of ``ldpfl.compare``, the entry its ``like`` names."""
    base = re.sub(VARIANT, "", scenario)
    datasets = config["ldpfl"]["datasets"]
    for label, d in datasets.items():
        if d["scenario"] in (scenario, base):
            return label, d
    for c in config["ldpfl"]["compare"]:
        if c["scenario"] in (scenario, base):
            return c["like"], datasets[c["like"]]
    raise ValueError(f"scenario {scenario!r} is in no ldpfl.datasets or ldpfl.compare entry")


def ldpfl_params(config: dict, scenario: str) -> dict:
    """The training settings of an LDP-FL run on ``scenario`` as its rule's params: ``ldpfl``'s device, mode,
    group, batch, local_epochs, adaptive_range and init, overridden by its ``ldpfl.datasets`` entry's arch, lr,
    mode, local_epochs, batch and init."""
    d = config["ldpfl"]
    entry = ldpfl_dataset(config, scenario)[1]
    return {
        **{k: d[k] for k in ("device", "mode", "group", "batch", "local_epochs", "adaptive_range", "init")},
        **{k: v for k, v in entry.items() if k in ("arch", "lr", "mode", "local_epochs", "batch", "init")},
    }


@dataclass(frozen=True)
class LdpdlSettings:
    """LDP-DL's query budget (S queries a round, T AQS rounds) and its student's training."""

    queries_per_iteration: int
    iterations: int
    student_arch: str
    student_epochs: int
    student_batch: int

    @classmethod
    def of(cls, config: dict) -> LdpdlSettings:
        d = config["ldpdl"]
        s = d["student"]
        return cls(d["queries_per_iteration"], d["iterations"], s["arch"], s["epochs"], s["batch"])

    def shape(self, qs: str) -> tuple[int, int]:
        """(queries per iteration, iterations) of a run.  Without AQS (``qs`` random) the queries do not depend
        on the student, so the S x T random queries are drawn at once and one student is trained on them: the
        same final student as T rounds of S (each retrains from scratch on all queries so far)."""
        s, t = self.queries_per_iteration, self.iterations
        return (s, t) if qs == "aqs" else (s * t, 1)

    @property
    def all_queries(self) -> int:
        """S x T: a run without AQS, PATE's student and the noise-free ceiling train on this many queries."""
        return self.shape("random")[0]
