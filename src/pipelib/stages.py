"""Every rule as data: which method it belongs to, the run record that names its runs, its role in the threat
model, the training work it plans, and which of its outputs leave a party or hold private state.

:mod:`pipelib.boundary` takes its role table from here and :mod:`pipelib.plan` its planned work, so neither
branches per method.  A method is one :class:`Method`: its run record (:mod:`pipelib.runs`) and its
:class:`Stage` s; its paths and tables are its part of :mod:`pipelib.design`, its pages entries of
:mod:`pipelib.report.registry`.  ``tests/test_stages.py`` registers a toy method here, and
``tests/test_toy_method.py`` runs a toy paper method with a table and a page through Snakemake from four
files (docs/development.md, "Adding a method", counts what a real method touches).  Light: no torch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import work
from .runs import (
    AUDIT_KINDS,
    AuditRun,
    DistillRun,
    DpsgdRun,
    FedmdRun,
    LdpdlRun,
    LdpflRun,
    PateRun,
    RknnRun,
    teacher_run,
)

ROLE_NAMES = (
    "dealer",
    "party",
    "teachers",
    "curator",
    "owners",
    "public",
    "server",
    "federation",
    "baseline",
    "audit",
    "report",
)


@dataclass(frozen=True)
class Stage:
    """One rule.  ``role``: its role in the threat model (pipelib.boundary).  ``work``: its planned
    training work, ``(wildcards, work.Sizes) -> work.Work | None`` (None: it trains nothing).  ``releases``:
    a party job's outputs that may leave the party (privatized releases and their guarantees).
    ``private``: outputs of a federation or baseline job that hold private state (final models).
    ``private_source``: its outputs are private whatever its role (the LDP-DL teachers).  ``settings``: for
    a rule that trains, the config section whose ``device`` its jobs train on (a function of the wildcards
    where it depends on the run); the plan times its work on that device at the job's threads.  ``captured``:
    its training steps replay CUDA graphs on a GPU (``loop.fit(..., graph=True)``), as the plan times them."""

    rule: str
    role: str
    work: Callable | None = None
    releases: str | None = None
    private: str | None = None
    private_source: bool = False
    settings: str | Callable | None = None
    captured: bool = False

    def __post_init__(self):
        if self.role not in ROLE_NAMES:
            raise ValueError(f"rule {self.rule}: role {self.role!r} is not one of {', '.join(ROLE_NAMES)}")


@dataclass(frozen=True)
class Method:
    """A method (or a shared part of the workflow): its run record and its stages."""

    name: str
    run: type | None
    stages: tuple[Stage, ...]


def _report(*rules: str) -> tuple[Stage, ...]:
    return tuple(Stage(r, "report") for r in rules)


METHODS: dict[str, Method] = {}


def _student_settings(wildcards: dict) -> str:
    """The distillation student's device: reverse k-NN's section, or LDP-DL's for PATE (one student)."""
    return "ldpdl" if teacher_run(wildcards["teacher"]).kind == "pate" else "rknn"


def register(method: Method) -> Method:
    """Add a method; its rules must be new (a rule belongs to one method)."""
    taken = {s.rule for m in METHODS.values() for s in m.stages if m.name != method.name}
    clash = [s.rule for s in method.stages if s.rule in taken]
    if clash:
        raise ValueError(f"method {method.name}: rules {', '.join(clash)} belong to another method already")
    METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    METHODS.pop(name, None)


for _m in (
    Method(
        "data",
        None,
        (
            Stage("download", "dealer"),
            Stage("ingest", "dealer"),
            Stage("partition", "dealer"),
            Stage("party_data", "dealer"),
            Stage("audit_partition", "dealer"),
        ),
    ),
    Method(
        "public",
        None,
        (
            Stage("pretrain", "public", work.pretrain, settings="fedmd"),
            Stage("pretrain_pool", "public", work.pretrain_pool, settings="fedmd"),
            Stage("pretrain_epochs", "public", work.pretrain, settings="fedmd"),
            Stage("train_encoder", "public", work.train_encoder, settings="rknn"),
            Stage("embed_public", "public", work.embed_public, settings="rknn"),
            Stage("cluster", "public"),
        ),
    ),
    Method(
        "fedmd",
        FedmdRun,
        (
            Stage("nfdp_sample", "party", releases=r"\.ledger\.json$"),
            Stage("fedmd", "federation", work.fedmd, private=r"/models\.pt$", settings="fedmd", captured=True),
            Stage("fedmd_budget", "federation", work.fedmd, private=r"/models\.pt$", settings="fedmd", captured=True),
            Stage("fedmd_ablation", "federation", work.fedmd, private=r"/models\.pt$", settings="fedmd", captured=True),
            *_report(
                "nfdp_ledger", "table2", "table3", "table4", "table5", "table_fedmd_budget", "table_fedmd_ablation"
            ),
            *_report("figure_p002_budget", "figure_p002_privacy_vs_parties", "figure_p002_privacy_vs_k"),
            *_report("figure_p002_accuracy_vs_parties", "figure_p002_rounds"),
        ),
    ),
    Method(
        "centralized",
        None,
        (
            Stage("centralized", "baseline", work.centralized, private=r"/model\.pt$", settings="fedmd"),
            Stage("centralized_pooled", "baseline", work.centralized, private=r"/model\.pt$", settings="fedmd"),
        ),
    ),
    Method("dpsgd", DpsgdRun, (Stage("dpsgd", "baseline", work.dpsgd, settings="dpsgd"),)),
    Method(  # the distillation stage: reverse k-NN's and PATE's runs (pipelib.methods.distill)
        "distill",
        DistillRun,
        (
            Stage("distill_answers", "party"),
            Stage("distill_release", "party", releases=r"."),
            Stage("distill_curate", "curator"),
            Stage("distill_aggregate", "server"),
            Stage("distill_label", "server"),
            Stage("distill_student", "server", work.distill_student, settings=_student_settings),
        ),
    ),
    Method(
        "rknn",
        RknnRun,
        (
            Stage("embed_party", "party"),
            *_report("table_rknn", "figure_p003_queries_and_neighbours", "figure_p003_local_dp"),
        ),
    ),
    Method(
        "ldpdl",
        LdpdlRun,
        (
            Stage("ldpdl_encoder", "public", work.ldpdl_encoder, settings="ldpdl"),
            Stage("ldpdl_teachers", "teachers", work.ldpdl_teachers, private_source=True, settings="ldpdl"),
            Stage("ldpdl_release", "owners"),
            Stage("ldpdl_plan", "server"),
            Stage("ldpdl_student", "server", work.ldpdl_student, settings="ldpdl"),
            Stage("ldpdl_ceiling", "public", work.ldpdl_ceiling, settings="ldpdl"),
            *_report("table_ldpdl", "figure_p004"),
        ),
    ),
    # PATE's teachers (rule ldpdl_teachers) vote in one job, their votes private (for the curator only)
    Method(
        "pate",
        PateRun,
        (Stage("distill_votes", "owners", work.distill_votes, private_source=True, settings="ldpdl"),),
    ),
    Method(
        "ldpfl",
        LdpflRun,
        (Stage("ldpfl", "federation", work.ldpfl, settings="ldpfl"), *_report("table_ldpfl", "figure_p001")),
    ),
    Method(
        "audit",
        AuditRun,
        (
            *(Stage(f"audit_{k}", "audit") for k in AUDIT_KINDS),
            *_report("audit_table", "figure_audit"),
        ),
    ),
    Method(
        "report",
        None,
        _report(
            "privacy_ledger",
            "partition_summary",
            "compare",
            "claims",
            "reproduction_page",
            "reproduction_figure",
            "figure_compare",
            "all",
        ),
    ),
):
    register(_m)


def stages() -> dict[str, Stage]:
    """Every registered rule's stage, by rule name."""
    return {s.rule: s for m in METHODS.values() for s in m.stages}


def roles() -> dict[str, str]:
    """The role of every registered rule."""
    return {rule: s.role for rule, s in stages().items()}


def patterns(field: str) -> dict[str, re.Pattern]:
    """Compiled ``releases`` or ``private`` patterns of the rules that declare one."""
    return {rule: re.compile(getattr(s, field)) for rule, s in stages().items() if getattr(s, field)}


def run_of(rule: str, wildcards: dict):
    """The run record of one job (its method's record parsed from the job's wildcards); None for a rule
    whose method has no run record, or a job whose wildcards do not name a run (its shared jobs)."""
    for m in METHODS.values():
        if m.run is not None and any(s.rule == rule for s in m.stages):
            try:
                return m.run.of(wildcards)
            except KeyError:
                return None
    return None


def settings_section(rule: str, wildcards: dict) -> str | None:
    """The config section whose device a job of ``rule`` trains on (None: it trains nothing)."""
    stage = stages().get(rule)
    section = stage.settings if stage else None
    return section(dict(wildcards)) if callable(section) else section


def captured(rule: str) -> bool:
    """Whether ``rule``'s training steps replay CUDA graphs on a GPU (:attr:`Stage.captured`)."""
    stage = stages().get(rule)
    return bool(stage and stage.captured)


def planned_work(rule: str, wildcards: dict, sizes: work.Sizes) -> work.Work | None:
    """The training work one job of ``rule`` plans (None for a rule that trains nothing)."""
    stage = stages().get(rule)
    if stage is None or stage.work is None:
        return None
    w = stage.work(dict(wildcards), sizes)
    if w is not None:
        w.rule = rule
    return w
