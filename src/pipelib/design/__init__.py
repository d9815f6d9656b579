"""The experiment design of a validated config: which runs, tables, figures and pages it asks for, and the
paths, inputs and parameters of every job, as plain Python (no Snakemake object), unit-tested without
starting Snakemake.  workflow/rules/common.smk builds one :class:`Design` from the config; the rules read
its shared helpers by name (common.smk names them) and each method's part as ``D.<part>`` (``D.fedmd.inputs``).

A method's part is one module of this package (:mod:`.part` says what a part is), registered in
:data:`PARTS` under the pipelib.stages methods it serves; the aggregates (the default target, every result
file, every release record, the claims' sources, a page's inputs) iterate :data:`PARTS` and never list
methods.  Paths are relative to the working directory, under the preset's results folder (``res``); input
functions take a wildcards object (anything with the wildcards as attributes).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .. import vocab
from ..config import scenarios, selected
from ..data import ingest as raw
from ..report.registry import PAGES as PAGE_REGISTRY
from ..report.registry import default_pages, own_command_pages
from .ablation import AblationDesign
from .audit import AuditDesign
from .distill import DistillDesign
from .dpsgd import DpsgdDesign
from .fedmd import FedmdDesign
from .ldpdl import LDPDL_TABLE_ARMS, LdpdlDesign
from .ldpfl import LdpflDesign
from .part import DesignError, Part

__all__ = ["PARTS", "Design", "DesignError", "LDPDL_TABLE_ARMS", "Part"]

# Every method's part, by its name in the rules (D.<name>); in the order of the result rows of compare.csv
PARTS: dict[str, type[Part]] = {
    "fedmd": FedmdDesign,
    "ablation": AblationDesign,
    "distill": DistillDesign,
    "ldpdl": LdpdlDesign,
    "ldpfl": LdpflDesign,
    "dpsgd": DpsgdDesign,
    "audit": AuditDesign,
}


class Design:
    """Everything a validated ``config`` asks the workflow to make (its ``scenarios`` resolved: variants for
    other numbers of parties, repeats, audited canaries)."""

    fedmd: FedmdDesign
    ablation: AblationDesign
    distill: DistillDesign
    ldpdl: LdpdlDesign
    ldpfl: LdpflDesign
    dpsgd: DpsgdDesign
    audit: AuditDesign

    def __init__(self, config: dict):
        self.config = config
        self.DATA_ROOT = Path(config["data_root"])
        self.RESULTS = Path(config["results_dir"]).as_posix()  # without a trailing slash
        self.SCENARIOS = scenarios(config)  # those run.scenarios keeps, and variants
        self.FEDMD, self.RKNN, self.DPSGD = config["fedmd"], config["rknn"], config["dpsgd"]
        self.LDPDL, self.LDPFL, self.AUDIT = config["ldpdl"], config["ldpfl"], config["audit"]
        self.P002, self.P003 = config["paper002"], config["paper003"]
        self.TABLE2 = selected(config, "table2")
        self.AUDIT_SCENARIOS = [name for name, sc in self.SCENARIOS.items() if "audit" in sc]
        # PATE's student, device and delta: LDP-DL's (paper 004 compares them on the same student)
        keys = ("student", "loss", "device", "precision", "threads", "runtime")
        self.PATE = {**{k: self.LDPDL[k] for k in keys}, "delta": self.LDPDL["pate_delta"]}
        self.parts: dict[str, Part] = {}
        for name, part in PARTS.items():
            self.add(name, part)

    def add(self, name: str, part: type[Part]) -> Part:
        """Attach a method's part as ``self.<name>`` (a method's rule file may add its own: the aggregates
        built after include it)."""
        if name in self.parts or hasattr(type(self), name) and name not in PARTS:
            raise DesignError(f"design part {name!r}: the name is taken")
        self.parts[name] = part(self)
        setattr(self, name, self.parts[name])
        return self.parts[name]

    @property
    def PAGES(self):
        """The reproduction pages of the default target (pipelib.report.registry), in their order."""
        return default_pages()

    @property
    def EXTRA_PAGES(self):
        """Pages of their own command, not in the default target (FedMD's budget and loop ablations: hours
        of CPU at the paper's size)."""
        return own_command_pages()

    def seed_of(self, scenario):
        """A scenario's seed: its own, else the master seed (a variant has its base scenario's)."""
        return int(self.SCENARIOS[scenario].get("seed", self.config["seed"]))

    def res(self, path):
        """A path under this preset's results folder (config key results_dir)."""
        return f"{self.RESULTS}/{path}"

    def ingested(self, dataset):
        return {split: self.res(f"data/{dataset}/{split}.parquet") for split in vocab.SPLITS}

    def scenario_inputs(self, wildcards):
        sc = self.SCENARIOS[wildcards.scenario]
        private, public = self.ingested(sc["private"]), self.ingested(sc["public"])
        return {
            "private_train": private["train"],
            "private_test": private["test"],
            "public_train": public["train"],
            "public_test": public["test"],
        }

    def partition_params(self, wildcards):
        """Only the keys that decide the partition, so that changing k re-runs no partition."""
        return {k: v for k, v in self.SCENARIOS[wildcards.scenario].items() if k != "nfdp"}

    def party_ids(self, scenario):
        return range(self.SCENARIOS[scenario]["parties"])

    def partition_dir(self, scenario):
        return self.res(f"partitions/{scenario}")

    def party_table(self, scenario, party):
        return f"{self.partition_dir(scenario)}/party-{party}.parquet"

    def public_inputs(self, wildcards):
        """The scenario's public pool (a table of the public rows only, with pixels): all the server's
        jobs read of the public data, never an ingested table that may also hold private records.
        """
        return {"public": f"{self.partition_dir(wildcards.scenario)}/public.parquet"}

    def sample_dir(self, scenario, sampling, k):
        return self.res(f"samples/{scenario}/{sampling}-k{k}")

    def ingest_targets(self):
        """Datasets to ingest: those the scenarios use plus config['ingest'] (skipping absent optional ones)."""
        used = {sc[role] for sc in self.SCENARIOS.values() for role in ("public", "private")}
        wanted = list(dict.fromkeys([*sorted(used), *self.config["ingest"]]))
        targets = []
        for name in wanted:
            present = (self.DATA_ROOT / raw.dataset(name).folder).is_dir()
            if name in used or present or self.config["download"]:
                targets.append(self.res(f"data/{name}/class_counts.csv"))
            else:
                print(
                    f"pipelib: skipping dataset {name!r}: {self.DATA_ROOT / raw.dataset(name).folder} is absent "
                    f"and no scenario uses it",
                    file=sys.stderr,
                )
        return targets

    def preset_command(self, target):
        """The command that makes ``target`` with this config's preset (for the reproduction pages): the
        target first, since ``--configfile`` takes every path after it as a config file."""
        preset = self.config["preset"]
        extra = "" if preset == "paper" else f" --configfile presets/{preset}.yaml"
        return f".venv/bin/snakemake --cores 2 {target}{extra}"

    def slug(self, label):
        return re.sub(r"[^a-z0-9]+", "", label.lower())

    def tables(self):
        """The paper tables the parts make under this config."""
        return [t for part in self.parts.values() for t in part.tables()]

    def figures(self):
        """The figures the parts make under this config (the reproduction pages show them)."""
        return [f for part in self.parts.values() for f in part.figures()]

    def all_targets(self):
        return [
            *self.ingest_targets(),
            self.res("partitions.csv"),
            self.res("privacy_ledger.csv"),
            self.res("compare.csv"),
            self.res("claims.csv"),
            *[f"docs/reproduction/{self.config['preset']}/{page}.md" for page in self.PAGES],
            *[self.res(f"{t}.csv") for t in self.tables()],
            *[self.res(f"figures/{name}.png") for name in self.figures()],
            *[t for part in self.parts.values() for t in part.targets()],
            *[self.res(f"figures/compare_{sc}.png") for sc in self.compare_scenarios()],
        ]

    def result_files(self):
        """Every result row file of every method the config runs."""
        return list(dict.fromkeys(f for part in self.parts.values() for f in part.result_files()))

    def release_files(self):
        """Every file in which privatizing jobs recorded the guarantees of their releases: each part's standing
        ledgers (the NFDP samples'), then the release records behind every result file, asked of the part that
        owns the result's folder."""
        owner = {folder: part for part in self.parts.values() for folder in part.folders}
        files = [f for part in self.parts.values() for f in part.ledgers()]
        for path in self.result_files():
            files += owner[Path(path).relative_to(self.RESULTS).parts[0]].releases(path)
        return list(dict.fromkeys(files))

    def compare_scenarios(self):
        """The defined scenarios whose result rows compare.csv holds (one figure each)."""
        found = [Path(p).relative_to(self.RESULTS).parts[1] for p in self.result_files()]
        return sorted({sc for sc in found if sc in self.config["scenarios"]})

    def page_inputs(self, wildcards):
        """What one reproduction page is generated from (its registry entry, pipelib.report.registry): its
        tables and its figures' copies beside it (each page needs only its own paper's outputs, so it can be
        built as soon as they are)."""
        page = PAGE_REGISTRY[wildcards.page]
        made = set(self.tables())
        tables = [t for t in page.tables if t not in page.optional or t in made]
        if page.figures == "compare":
            names = [f"compare_{sc}" for sc in self.compare_scenarios()] + ["audit"]
        elif page.figures == "budget":
            names = ["p002_budget"] if self.ablation.budget_entries() else []
        elif page.figures.startswith("prefix:"):
            names = [n for n in self.figures() if n.startswith(page.figures.removeprefix("prefix:"))]
        else:
            names = []
        figures = [f"docs/reproduction/{self.config['preset']}/figures/{name}.png" for name in names]
        # the figures' data: which datasets each plots (the regime line under it), and on paper 004's page
        # what its figures show
        data = [self.res(f"figures/{n}.csv") for n in names] if page.figures.startswith("prefix:") else []
        return {
            **{t: self.res(f"{t}.csv") for t in tables},
            "figures": figures,
            "figure_data": data,
        }

    def claim_sources(self):
        """The tables and figure data this run makes that the papers' claims are checked on (name -> path)."""
        return {
            **{t: self.res(f"{t}.csv") for t in self.tables()},
            **{f: self.res(f"figures/{f}.csv") for f in dict.fromkeys(self.figures())},
        }
