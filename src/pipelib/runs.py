"""Runs as data: one typed, frozen record per kind of run, with the grammar of its name in one place.

A FedMD row's run name (the ``run`` wildcard of rules fedmd, fedmd_budget, audit_fedmd) is ``np``,
``nfdp-<sampling>-k<k>`` or ``ldp-<sampling>-k<k>`` (FedMD-LDP calibrated to the NFDP row of that sampling
and k).  An LDP-FL run's name (the ``flmech`` wildcard of rules ldpfl, audit_ldpfl) is ``none`` (noise-free
federated averaging), ``twopoint-eps<e>-adaptive`` or ``twopoint-eps<e>-c<c>-r<r>`` (a fixed range).  An
LDP-DL run's folder is ``<mechanism>-eps<e>-q<N_Q>-<owners>-<aqs|random>`` (``<owners>``: ``L<count>``
overlapping owners or ``parties``).  A PATE run lives in the distillation stage: teacher
``pate-<teachers>-q<queries>`` (``<teachers>``: ``T<count>`` disjoint shards or ``parties``), mechanism
``gnmax-eps<e>``; its flat name ``pate-eps<e>-<teachers>-q<queries>`` names its audit.  :class:`FedmdRun`,
:class:`LdpflRun`, :class:`LdpdlRun`, :class:`PateRun` and :class:`PateTeachers` parse and format them, and
so does :class:`RknnRun` for a reverse k-NN teacher (``rknn-<encoder>-s<s>-k<k>``; both teachers make the
``teacher`` wildcard of the distillation rules, :data:`TEACHER_RUN`); every other module
asks them instead of splitting strings, and the rules take their wildcard constraints from here.  Each
record's ``of(wildcards)`` reads a job's run from its wildcards (:func:`pipelib.stages.run_of`);
:class:`AuditRun` names an audit of any of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .vocab import FEDMD_KINDS, SAMPLINGS, SOFT_LABEL_MECHANISMS

FEDMD_METHOD = {"np": "FedMD-NP", "nfdp": "FedMD-NFDP", "ldp": "FedMD-LDP"}
FEDMD_RUN = re.compile(rf"np|(?:nfdp|ldp)-(?:{'|'.join(SAMPLINGS)})-k[1-9][0-9]*")  # the wildcard's constraint


@dataclass(frozen=True)
class FedmdRun:
    """One FedMD row: ``kind`` np (every party on all its records), nfdp (on its NFDP sample of ``k``
    records drawn with ``sampling``) or ldp (all records, Gaussian-noised answers calibrated to that NFDP
    sample's (epsilon, delta))."""

    kind: str
    sampling: str | None = None
    k: int | None = None

    def __post_init__(self):
        if self.kind not in FEDMD_KINDS:
            raise ValueError(f"FedMD run kind {self.kind!r}: one of {', '.join(FEDMD_KINDS)}")
        if (self.kind == "np") != (self.sampling is None and self.k is None):
            raise ValueError(f"FedMD run {self.kind!r}: np takes no sample, nfdp and ldp a sampling and a k")
        if self.sampling is not None and self.sampling not in SAMPLINGS:
            raise ValueError(f"FedMD run sampling {self.sampling!r}: one of {', '.join(SAMPLINGS)}")

    @classmethod
    def parse(cls, name: str) -> FedmdRun:
        """The run a name stands for; ValueError naming the grammar for anything else."""
        if not FEDMD_RUN.fullmatch(name):
            raise ValueError(f"FedMD run {name!r}: expected np, nfdp-<sampling>-k<k> or ldp-<sampling>-k<k>")
        if name == "np":
            return cls("np")
        kind, sampling, k = name.split("-")
        return cls(kind, sampling, int(k[1:]))

    @classmethod
    def of(cls, wildcards) -> FedmdRun:
        """The run of a job's wildcards (``run``)."""
        return cls.parse(wildcards["run"])

    @classmethod
    def nfdp(cls, sampling: str, k: int) -> FedmdRun:
        return cls("nfdp", sampling, int(k))

    @classmethod
    def ldp(cls, sampling: str, k: int) -> FedmdRun:
        return cls("ldp", sampling, int(k))

    @property
    def name(self) -> str:
        return "np" if self.kind == "np" else f"{self.kind}-{self.sampling}-k{self.k}"

    def __str__(self) -> str:
        return self.name

    @property
    def method(self) -> str:
        """The result row's method: FedMD-NP, FedMD-NFDP or FedMD-LDP."""
        return FEDMD_METHOD[self.kind]

    @property
    def sample(self) -> tuple[str, int] | None:
        """(sampling, k) of the NFDP sample the run reads (nfdp: its parties' data; ldp: the ledger it is
        calibrated to), or None (np)."""
        return None if self.kind == "np" else (self.sampling, self.k)

    @property
    def draws_noise(self) -> bool:
        """Whether the job itself draws a mechanism's randomness (FedMD-LDP's noise; NFDP's is its samples')."""
        return self.kind == "ldp"


def _unnamed(pattern: re.Pattern) -> str:
    """A grammar without its group names: a wildcard's constraint (Snakemake reads <name> as a path variable)."""
    return re.sub(r"\?P<\w+>", "", pattern.pattern)


_LDPFL_PARTS = re.compile(r"twopoint-eps(?P<eps>[0-9.]+)-(?:(?P<adaptive>adaptive)|c(?P<c>-?[0-9.]+)-r(?P<r>[0-9.]+))")
LDPFL_CLIP = re.compile(r"clip-c(?P<c>-?[0-9.]+)-r(?P<r>[0-9.]+)")  # a noise-free run clipped to a box
LDPFL_RUN = re.compile("|".join(("none", _unnamed(_LDPFL_PARTS), _unnamed(LDPFL_CLIP))))  # the wildcard's constraint


@dataclass(frozen=True)
class LdpflRun:
    """One LDP-FL run: noise-free federated averaging (``epsilon`` None), or every client's weights through
    the two-point mechanism at ``epsilon`` with the ``adaptive`` per-layer range or a fixed ``(c, r)``; a
    noise-free run with a fixed ``(c, r)`` clips every upload to that box and flips no coin (``clip-c<c>-r<r>``:
    what the box costs by itself, the reference of a fixed-range row)."""

    epsilon: float | None = None
    radius: str | tuple[float, float] | None = None

    def __post_init__(self):
        if self.epsilon is not None and self.radius is None:
            raise ValueError("LDP-FL run: a private run takes an epsilon and a range (adaptive or a fixed box)")
        if self.epsilon is None and self.radius == "adaptive":
            raise ValueError("LDP-FL run: noise-free takes no range or a fixed box to clip to, not adaptive")
        if self.radius is not None and self.radius != "adaptive":
            object.__setattr__(self, "radius", (float(self.radius[0]), float(self.radius[1])))
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", float(self.epsilon))

    @classmethod
    def parse(cls, name: str) -> LdpflRun:
        """The run a name stands for; ValueError naming the grammar for anything else."""
        m, clip = _LDPFL_PARTS.fullmatch(name), LDPFL_CLIP.fullmatch(name)
        if not LDPFL_RUN.fullmatch(name) or (name != "none" and not (m or clip)):
            raise ValueError(
                f"LDP-FL run {name!r}: expected none, twopoint-eps<e>-adaptive, twopoint-eps<e>-c<c>-r<r> or "
                "clip-c<c>-r<r>"
            )
        if name == "none":
            return cls()
        if clip:
            return cls(None, (float(clip["c"]), float(clip["r"])))
        return cls(float(m["eps"]), "adaptive" if m["adaptive"] else (float(m["c"]), float(m["r"])))

    @classmethod
    def of(cls, wildcards) -> LdpflRun:
        """The run of a job's wildcards (``flmech``)."""
        return cls.parse(wildcards["flmech"])

    @property
    def name(self) -> str:
        if self.radius is None:
            return "none"
        if self.radius == "adaptive":
            return f"{self.spec}-adaptive"
        return f"{self.spec or 'clip'}-c{self.radius[0]!r}-r{self.radius[1]!r}"

    def __str__(self) -> str:
        return self.name

    @property
    def spec(self) -> str | None:
        """The mechanism's registry spec (``twopoint-eps<e>``), or None (noise-free)."""
        return None if self.epsilon is None else f"twopoint-eps{self.epsilon!r}"

    @property
    def clipped(self) -> bool:
        """Noise-free with every upload clipped to a fixed box (``clip-c<c>-r<r>``)."""
        return self.epsilon is None and self.radius is not None


class _Teacher:
    """A distillation teacher's record: its name is the ``teacher`` wildcard (and its ``spec``)."""

    @classmethod
    def of(cls, wildcards):
        """The teacher of a job's wildcards (``teacher``)."""
        return cls.parse(wildcards["teacher"])

    @property
    def spec(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name


_RKNN_PARTS = re.compile(r"rknn-(?P<encoder>[a-z][a-z0-9_]*)-s(?P<s>[1-9][0-9]*)-k(?P<k>[1-9][0-9]*)")
RKNN_RUN = re.compile(_unnamed(_RKNN_PARTS))  # a reverse k-NN teacher in the ``teacher`` wildcard


@dataclass(frozen=True)
class RknnRun(_Teacher):
    """One reverse k-NN teacher: every party's record votes for its ``k`` nearest of ``s`` public queries
    (the k-means centers of the public set in ``encoder``'s space); name ``rknn-<encoder>-s<s>-k<k>``."""

    encoder: str
    s: int
    k: int

    kind = "rknn"

    @classmethod
    def parse(cls, name: str):
        """The teacher a name stands for; ValueError naming the grammar for anything else."""
        m = _RKNN_PARTS.fullmatch(name)
        if not m:
            raise ValueError(f"bad reverse k-NN teacher {name!r}; expected rknn-<encoder>-s<s>-k<k>")
        return cls(m["encoder"], int(m["s"]), int(m["k"]))

    @property
    def name(self) -> str:
        return f"rknn-{self.encoder}-s{self.s}-k{self.k}"


@dataclass(frozen=True)
class DpsgdRun:
    """One DP-SGD run: model ``arch`` trained to the guarantee ``epsilon`` (folder ``<arch>/eps<e>``)."""

    arch: str
    epsilon: float

    method = "DP-SGD"

    @classmethod
    def of(cls, wildcards) -> DpsgdRun:
        """The run of a job's wildcards (arch, eps)."""
        return cls(wildcards["arch"], float(wildcards["eps"]))

    @property
    def name(self) -> str:
        return f"{self.arch}/eps{float(self.epsilon)!r}"

    def __str__(self) -> str:
        return self.name


_DESIGN = r"L[1-9][0-9]*|T[1-9][0-9]*|parties"
LDPDL_RUN = re.compile(
    rf"(?:{'|'.join(SOFT_LABEL_MECHANISMS)})-eps[0-9.]+-q[1-9][0-9]*-(?:{_DESIGN})-(?:aqs|random)"
)  # an LDP-DL run's folder
_PATE_DESIGN = r"[TS][1-9][0-9]*|parties"  # PATE's teachers are disjoint: shards of the pool, or the parties
_PATE_PARTS = re.compile(rf"pate-eps(?P<eps>[0-9.]+)-(?P<design>{_PATE_DESIGN})-q(?P<queries>[1-9][0-9]*)")
PATE_RUN = re.compile(_unnamed(_PATE_PARTS))  # a PATE run's name (its audit's folder)
_PATE_TEACHERS = re.compile(rf"pate-(?P<design>{_PATE_DESIGN})-q(?P<queries>[1-9][0-9]*)")
PATE_TEACHERS = re.compile(_unnamed(_PATE_TEACHERS))  # PATE's teachers in the ``teacher`` wildcard
TEACHER_RUN = re.compile(f"{RKNN_RUN.pattern}|{PATE_TEACHERS.pattern}")  # the ``teacher`` wildcard's constraint


@dataclass(frozen=True)
class PateTeachers(_Teacher):
    """PATE's teachers as a teacher of the distillation stage: the teachers of ``design`` (``T<n>`` disjoint
    shards of the pool, each a head on the frozen encoder as LDP-DL's owners; ``S<n>`` the same shards, each
    a small CNN trained from scratch, as PATE trains its teachers; or ``parties``), each voting on the same
    ``queries`` public samples; name
    ``pate-<design>-q<queries>``."""

    design: str
    queries: int

    kind = "pate"

    @classmethod
    def parse(cls, name: str):
        """The teachers a name stands for; ValueError naming the grammar for anything else."""
        m = _PATE_TEACHERS.fullmatch(name)
        if not m:
            raise ValueError(f"bad PATE teacher {name!r}; expected pate-<T<n>|S<n>|parties>-q<queries>")
        return cls(m["design"], int(m["queries"]))

    @property
    def name(self) -> str:
        return f"pate-{self.design}-q{int(self.queries)}"


@dataclass(frozen=True)
class BudgetPoint:
    """A FedMD distillation budget and pre-training (the budget ablation's folder): ``rounds`` of ``queries``
    public queries from models pre-trained ``epochs`` epochs; name ``R<rounds>-q<queries>-pe<epochs>``."""

    rounds: int
    queries: int
    epochs: int

    @classmethod
    def of(cls, wildcards) -> BudgetPoint:
        return cls(int(wildcards["rounds"]), int(wildcards["q"]), int(wildcards["pe"]))

    @property
    def name(self) -> str:
        return f"R{int(self.rounds)}-q{int(self.queries)}-pe{int(self.epochs)}"


BUDGET_WILDCARDS = "R{rounds}-q{q}-pe{pe}"  # a budget point's folder as Snakemake wildcards


# An LDP-DL run's folder name as Snakemake wildcards: the path form of LdpdlRun.name (tested against it).
LDPDL_WILDCARDS = "{ldmech}-eps{eps}-q{nq}-{design}-{qs}"


@dataclass(frozen=True)
class LdpdlRun:
    """One LDP-DL run: ``mechanism`` (PM, Duchi, Laplace) at total ``epsilon`` per owner, ``per_query``
    (N_Q) owners answering each query, the owners' ``design`` and the query ``sampling`` (aqs or random)."""

    mechanism: str
    epsilon: float
    per_query: int
    design: str
    sampling: str

    method = "LDP-DL"

    @classmethod
    def of(cls, wildcards) -> LdpdlRun:
        """The run of a job's wildcards (ldmech, eps, nq, design, qs)."""
        w = wildcards
        return cls(w["ldmech"], float(w["eps"]), int(w["nq"]), w["design"], w["qs"])

    @property
    def name(self) -> str:
        return f"{self.mechanism}-eps{float(self.epsilon)!r}-q{int(self.per_query)}-{self.design}-{self.sampling}"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class PateRun:
    """One PATE run: the curator's GNMax at total ``epsilon`` over the teachers of ``design``, each voting on
    ``queries`` public samples.  It runs in the distillation stage: teacher ``pate-<design>-q<queries>``
    (:class:`PateTeachers`), mechanism ``gnmax-eps<e>``; its flat name ``pate-eps<e>-<design>-q<queries>``
    names its audit."""

    epsilon: float
    design: str
    queries: int

    method = "PATE"

    @classmethod
    def of(cls, wildcards) -> PateRun:
        """The run of a distillation job's wildcards (teacher, and mech or cmech)."""
        teachers = PateTeachers.of(wildcards)
        mech = wildcards["mech"] if "mech" in wildcards.keys() else wildcards["cmech"]  # Snakemake's: keys()
        if not mech.startswith("gnmax-eps"):
            raise ValueError(f"PATE run: mechanism {mech!r} is not gnmax-eps<e>")
        return cls(float(mech[len("gnmax-eps") :]), teachers.design, teachers.queries)

    @property
    def teachers(self) -> PateTeachers:
        return PateTeachers(self.design, int(self.queries))

    @property
    def mechanism(self) -> str:
        """The curator's mechanism (registry spec and folder): ``gnmax-eps<e>``."""
        return f"gnmax-eps{float(self.epsilon)!r}"

    @property
    def name(self) -> str:
        return f"pate-eps{float(self.epsilon)!r}-{self.design}-q{int(self.queries)}"

    def __str__(self) -> str:
        return self.name


def teacher_run(name: str) -> RknnRun | PateTeachers:
    """The distillation teacher a ``teacher`` wildcard names (reverse k-NN or PATE's teachers)."""
    return (PateTeachers if name.startswith("pate-") else RknnRun).parse(name)


class DistillRun:
    """The run of a distillation-stage job: a reverse k-NN teacher, or a PATE run (:func:`run_of` of
    :mod:`pipelib.stages` asks ``of``)."""

    @staticmethod
    def of(wildcards) -> RknnRun | PateRun:
        if wildcards["teacher"].startswith("pate-"):
            return PateRun.of(wildcards)
        return RknnRun.of(wildcards)


def student_run(name: str) -> LdpdlRun | PateRun:
    """The LDP-DL or PATE run a name stands for; ValueError naming both grammars for anything else."""
    m = _PATE_PARTS.fullmatch(name)
    if m:
        return PateRun(float(m["eps"]), m["design"], int(m["queries"]))
    if LDPDL_RUN.fullmatch(name):
        mech, eps, nq, rest = name.split("-", 3)
        design, sampling = rest.rsplit("-", 1)
        return LdpdlRun(mech, float(eps[3:]), int(nq[1:]), design, sampling)
    raise ValueError(
        f"LDP-DL/PATE run {name!r}: expected <mechanism>-eps<e>-q<N_Q>-<owners>-<aqs|random> or "
        "pate-eps<e>-<teachers>-q<queries>"
    )


AUDIT_KINDS = ("distill", "fedmd", "dpsgd", "ldpfl", "ldpdl", "validation")


@dataclass(frozen=True)
class AuditRun:
    """One audit (rule ``audit_<kind>``, docs/audit.md): of ``kind``'s run in ``folder`` on the audited
    ``scenario`` (a canary variant), or a validation audit (``scenario`` None, ``folder`` its name:
    ``none`` or ``rr-eps<e>``).  Its output is ``audit/<kind>/<scenario>/<folder>/audit.json``."""

    kind: str
    scenario: str | None
    folder: str

    def __post_init__(self):
        if self.kind not in AUDIT_KINDS:
            raise ValueError(f"audit kind {self.kind!r}: one of {', '.join(AUDIT_KINDS)}")
        if (self.kind == "validation") != (self.scenario is None):
            raise ValueError(f"audit {self.kind!r}: a validation audit has no scenario, the others one")

    @classmethod
    def of(cls, wildcards) -> AuditRun:
        """The audit of a job's wildcards; KeyError where they name no audited run (audit_partition)."""
        w = dict(wildcards.items())  # Snakemake's wildcards: ``in`` looks at the values
        if "name" in w:
            return cls("validation", None, w["name"])
        if "teacher" in w:
            return cls("distill", w["scenario"], f"{w['teacher']}/{w['mech']}")
        if "answer" in w:
            return cls("fedmd", w["scenario"], f"{w['answer']}/{FedmdRun.parse(w['run'])}")
        if "arch" in w:
            return cls("dpsgd", w["scenario"], DpsgdRun.of(w).name)
        if "flmech" in w:
            return cls("ldpfl", w["scenario"], f"{LdpflRun.of(w)}/f{w['frac']}-m{w['rounds']}")
        if "run" in w:
            return cls("ldpdl", w["scenario"], student_run(w["run"]).name)
        raise KeyError("these wildcards name no audited run")

    @property
    def audited(self):
        """The audited run's record (None for a validation audit)."""
        head, _, tail = self.folder.partition("/")
        if self.kind == "distill":
            return DistillRun.of({"teacher": head, "mech": tail})
        if self.kind == "fedmd":
            return FedmdRun.parse(tail)
        if self.kind == "dpsgd":
            return DpsgdRun(head, float(tail.removeprefix("eps")))
        if self.kind == "ldpfl":
            return LdpflRun.parse(head)
        if self.kind == "ldpdl":
            return student_run(self.folder)
        return None

    @property
    def name(self) -> str:
        return "/".join(p for p in (self.kind, self.scenario, self.folder) if p is not None)

    @property
    def path(self) -> str:
        """The audit's output, relative to the results folder."""
        return f"audit/{self.name}/audit.json"

    def __str__(self) -> str:
        return self.name
