"""The DAG is the threat model: the role every rule plays, what each role may read, and a checker that
the test suite applies to the whole DAG (and anyone can apply to a dry run).

Roles:

=========== ===========================================================================================
dealer      sets the experiment up: raw files, partitions, each party's table
party       one party's job: its own table and what it derived from it; nothing of another party
curator     the trusted curator of a central mechanism: the raw answers in, a privatized sum out
owners      every owner's local sanitizer of one LDP-DL iteration in one job (a job per owner and
            iteration would be thousands): each owner's answers come from its own files only (in code,
            :func:`pipelib.methods.teachers.release`); only sanitized answers come out.  PATE's teachers'
            votes (rule distill_votes, :func:`pipelib.methods.teachers.teacher_votes`) likewise, but raw:
            private, for the curator only
public      public data only (pre-training, encoders, public embeddings, clustering)
server      public data and privatized releases only
federation  a FedMD row or an LDP-FL run: all parties (clients), the shuffler and the server in one job,
            the boundary kept in code (:mod:`pipelib.methods.fedmd`, :mod:`pipelib.methods.ldpfl`); its
            checkpoint and log are never an input of another rule
baseline    the centralized baselines on the pooled private data: non-private (its model is private), and
            DP-SGD (its model is a privatized release, its guarantee in releases.json)
audit       the privacy auditor (docs/audit.md): may read private data and the canary lists (which
            canaries an audited variant's party 0 holds); no other role may read a canary list
report      tables, ledgers and pages made from results
=========== ===========================================================================================

The check has two levels.  By producer: every file is classified by the role of the rule that made it
(a party's output is private unless it is one of that rule's declared releases), and each role may
read only some kinds.  By content: for every Parquet data table a public, server or report job reads,
the rows it holds (dataset, split, index) are compared with the private pool of every scenario the job
serves (the parties' rows in the scenario's ``assignment.parquet``); a party's job may hold only its
own rows.  Without the files (a dry run of a preset not yet run), an ingested table, an assignment, a
party's table or sample counts as holding every row of its dataset; a partition's public and test
tables hold no private row by construction (checked by content once they exist).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from . import stages
from .io import table_meta

# The role of every rule, the outputs of party jobs that may leave the party (privatized releases and the
# guarantees they publish), the outputs of federation and baseline jobs that hold private state (final
# models): declared per method in pipelib.stages and read from there at each check, so a registered method
# is checked like the built-in ones.
# The kinds of file each role may read (``data``: a dealer's table, checked by content as well).
MAY_READ = {
    "dealer": {"source", "data", "summary"},
    "party": {"data", "private", "public", "summary"},
    "curator": {"data", "private", "public", "summary"},
    "teachers": {"data", "public", "summary"},  # public: the teachers' frozen encoder
    "owners": {"data", "private", "public", "summary"},
    "public": {"data", "public", "summary"},
    "server": {"data", "public", "release", "summary"},
    "federation": {"data", "private", "public", "release", "result", "summary"},
    "baseline": {"data", "public", "summary"},
    "report": {"data", "public", "release", "result", "summary"},
    "audit": {"source", "data", "private", "public", "release", "result", "summary", "canary"},
}
CANARIES = re.compile(r"/canaries\.parquet$")  # a dealer's canary list: the audit's secret
# The teachers' job fits every owner's teacher on that owner's records only (pipelib.methods.teachers.fit_heads,
# tested); the owners' jobs answer, each owner from its own teacher (LDP-DL's sanitized answers; PATE's raw
# votes, rule distill_votes, private: for the curator only).  The teachers stay private: the only private
# files the owners' jobs may read are those teachers, and the curator's the teachers' summary and raw answers.
PRIVATE_FROM = {"owners": ("ldpdl_teachers",), "curator": ("ldpdl_teachers", "distill_answers", "distill_votes")}
# roles whose data tables must hold no private row (the owners and the curator read the public table only)
ROW_CHECKED = {"public", "server", "report", "owners", "curator"}
PARTY = re.compile(r"party-(\d+)")


class Layout:
    """Where things are under a preset's results folder (config key ``results_dir``)."""

    def __init__(self, results_dir: str = "results"):
        r = re.escape(results_dir.rstrip("/"))
        self.results_dir = results_dir.rstrip("/")
        # never an input of any rule: logs, benchmarks and resume checkpoints (they hold private state)
        self.never_read = re.compile(rf"^{r}/(logs|benchmarks)/|resume\.pt$")
        self.ingested = re.compile(rf"^{r}/data/(?P<dataset>[^/]+)/(?P<split>[^/]+)\.parquet$")
        self.scenario_table = re.compile(rf"^{r}/(partitions|samples)/(?P<scenario>[^/]+)/")
        self.public_tables = re.compile(rf"^{r}/partitions/[^/]+/(public|test)\.parquet$")  # no private row

    def partition(self, scenario: str, name: str) -> str:
        return f"{self.results_dir}/partitions/{scenario}/{name}"


@dataclass
class DagJob:
    """One job of a dry run's DAG as the boundary check reads it (not a running job's context,
    :class:`pipelib.job.Job`)."""

    rule: str
    inputs: list[str]
    outputs: list[str]
    wildcards: dict = field(default_factory=dict)


def parse_dry_run(text: str) -> list[DagJob]:
    """The jobs of ``snakemake -n`` output: rule, inputs, outputs and wildcards of each."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m:
            continue
        found = {k: re.search(rf"^\s+{k}: (.*)$", block, flags=re.M) for k in ("input", "output", "wildcards")}
        files = {k: f.group(1).split(", ") if f else [] for k, f in found.items()}
        wildcards = dict(w.split("=", 1) for w in files["wildcards"])
        jobs.append(DagJob(m.group(1), files["input"], files["output"], wildcards))
    return jobs


def rule_roles(rule_names) -> list[str]:
    """Problems with the role table: rules of the workflow that have no role."""
    roles = stages.roles()
    return [f"rule {r} has no role in pipelib.stages" for r in rule_names if r not in roles]


def _kind(path: str, producer: DagJob | None, table: dict) -> str:
    """The kind of file ``path`` is (``table``: pipelib.stages.stages() of this check)."""
    if producer is None:
        return "source"
    stage = table.get(producer.rule)
    role = stage.role if stage else None
    if role == "dealer":
        if CANARIES.search(path):
            return "canary"
        return "data" if path.endswith(".parquet") else "summary"
    if role == "party":
        return "release" if stage.releases and re.search(stage.releases, path) else "private"
    if stage is not None and stage.private_source:
        return "private"
    if role in ("curator", "owners"):
        return "release"
    if role in ("public", "server"):
        return "public"
    return "private" if stage is not None and stage.private and re.search(stage.private, path) else "result"


class Rows:
    """Row ids (dataset, split, index) of data tables and of scenarios' private pools, read once."""

    def __init__(self, root: Path | None, scenarios: dict, layout: Layout):
        self.root, self.scenarios, self.layout, self._cache = root, scenarios, layout, {}

    def of_table(self, path: str) -> set | None:
        """The rows a data table holds; None when it cannot be known."""
        if path in self._cache:
            return self._cache[path]
        rows = None
        full = self.root / path if self.root is not None else None
        if full is not None and full.is_file():
            meta, names = table_meta(full), pq.read_schema(full).names
            if "index" in names and "dataset" in meta:
                frame = pq.read_table(full, columns=[c for c in ("split", "index") if c in names]).to_pandas()
                splits = frame["split"] if "split" in frame else [meta.get("split")] * len(frame)
                rows = set(zip([meta["dataset"]] * len(frame), splits, frame["index"].tolist()))
        elif self.layout.ingested.search(path):  # not on disk: an ingested table holds every row of its dataset
            rows = {(self.layout.ingested.search(path)["dataset"], "*", "*")}
        elif self.layout.scenario_table.search(path) and not self.layout.public_tables.search(path):
            scenario = self.layout.scenario_table.search(path)["scenario"]  # a partition's or a sample's table
            rows = {(self.scenarios[scenario]["private"], "*", "*")} if scenario in self.scenarios else None
        self._cache[path] = rows
        return rows

    def private(self, scenario: str) -> set:
        """The scenario's private pool: the rows dealt to parties (or, without files, its private dataset)."""
        key = ("private", scenario)
        if key not in self._cache:
            path = self.root / self.layout.partition(scenario, "assignment.parquet") if self.root else None
            if path is not None and path.is_file():
                frame = pq.read_table(path, columns=["split", "index", "party"]).to_pandas()
                frame = frame[frame["party"] >= 0]
                ds = table_meta(path)["dataset"]
                self._cache[key] = set(zip([ds] * len(frame), frame["split"], frame["index"].tolist()))
            else:
                self._cache[key] = {(self.scenarios[scenario]["private"], "*", "*")}
        return self._cache[key]

    def party(self, scenario: str, party: str) -> set | None:
        return self.of_table(self.layout.partition(scenario, f"party-{party}.parquet"))


def _overlap(a: set, b: set) -> bool:
    """Whether two row sets share a row; ('dataset', '*', '*') stands for every row of a dataset."""
    wild_a = {d for d, s, _ in a if s == "*"}
    wild_b = {d for d, s, _ in b if s == "*"}
    if wild_a & {d for d, _, _ in b} or wild_b & {d for d, _, _ in a}:
        return True
    return bool(a & b)


def served_scenarios(jobs: list[DagJob]) -> dict[int, set]:
    """For every job, the scenarios it serves: its own wildcard, else those of the jobs that consume its
    outputs, transitively (a pre-training serves the scenarios whose FedMD rows start from it)."""
    producer = {o: j for j in jobs for o in j.outputs}
    consumers: dict[int, list[DagJob]] = {}
    for j in jobs:
        for i in j.inputs:
            if i in producer:
                consumers.setdefault(id(producer[i]), []).append(j)
    memo: dict[int, set] = {}

    def serve(job: DagJob, seen=()) -> set:
        if id(job) in memo:
            return memo[id(job)]
        if "scenario" in job.wildcards:
            out = {job.wildcards["scenario"]}
        else:
            out = set()
            for c in consumers.get(id(job), []):
                if id(c) not in seen:
                    out |= serve(c, (*seen, id(job)))
        memo[id(job)] = out
        return out

    return {id(j): serve(j) for j in jobs}


def check(jobs: list[DagJob], scenarios: dict, root: Path | None = None, results_dir: str = "results") -> list[str]:
    """Every violation of the boundary in ``jobs`` (empty when the DAG keeps it).  ``scenarios``: the
    config's scenarios; ``root``: the working directory whose files to check by content (None: by name);
    ``results_dir``: the config's results folder."""
    problems = rule_roles(sorted({j.rule for j in jobs}))
    producer = {o: j for j in jobs for o in j.outputs}
    serves = served_scenarios(jobs)
    layout = Layout(results_dir)
    rows = Rows(Path(root) if root is not None else None, scenarios, layout)
    table = stages.stages()
    for job in jobs:
        role = table[job.rule].role if job.rule in table else None
        if role is None:
            continue
        for path in job.inputs:
            where = f"{job.rule} ({role}) reads {path}"
            if layout.never_read.search(path):
                problems.append(f"{where}: logs, benchmarks and checkpoints are never inputs")
                continue
            kind = _kind(path, producer.get(path), table)
            if kind not in MAY_READ[role]:
                made = f"{producer[path].rule}'s output" if path in producer else "no rule makes it"
                problems.append(f"{where}: a {kind} file ({made})")
                continue
            source = producer[path].rule if path in producer else None
            if kind == "private" and role in PRIVATE_FROM and source not in PRIVATE_FROM[role]:
                problems.append(f"{where}: a private file of {source}, not of {', '.join(PRIVATE_FROM[role])}")
            party = PARTY.search(path)
            if role == "party" and party and party.group(1) != job.wildcards.get("party"):
                problems.append(f"{where}: another party's file")
            if kind != "data":
                continue
            held = rows.of_table(path)
            if held is None:
                continue
            if role in ROW_CHECKED:  # a job that serves no one scenario (a table of all) is held to every one
                for scenario in sorted(serves[id(job)] or scenarios):
                    if _overlap(held, rows.private(scenario)):
                        problems.append(f"{where}: it holds private records of scenario {scenario}")
            elif role == "party" and "scenario" in job.wildcards:
                own = rows.party(job.wildcards["scenario"], job.wildcards.get("party"))
                others = rows.private(job.wildcards["scenario"]) - (own or set())
                if own is not None and _overlap(held, others):
                    problems.append(f"{where}: it holds records of other parties")
    return problems
