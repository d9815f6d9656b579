"""The experiment design of a validated config: which runs, tables, figures and pages it asks for, and the
paths, inputs and parameters of every job, as plain Python (no Snakemake object), unit-tested without
starting Snakemake.  workflow/rules/common.smk builds one :class:`Design` from the config and the rules
read it; what needs Snakemake itself (the run's start and end, code digests, raw-data links) stays there.

Paths are relative to the working directory, under the preset's results folder (``res``); input functions
take a wildcards object (anything with the wildcards as attributes).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from . import vocab
from .config import (
    audit_rows,
    audit_variant,
    dpsgd_pretrained,
    dpsgd_scenarios,
    encoder_chain,
    fedmd_compare_runs,
    kept,
    ldpdl_compare_scenarios,
    ldpfl_compare_runs,
    party_variant,
    replicate,
    scenarios,
    selected,
)
from .config import encoder_settings as resolved_encoder
from .config import ldpfl_dataset as ldpfl_dataset_of
from .data import ingest as raw
from .methods.ldpdl import TABLE_ARMS, teacher_model
from .report.registry import PAGES as PAGE_REGISTRY
from .report.registry import default_pages, own_command_pages
from .runs import (
    AuditRun,
    BudgetPoint,
    DpsgdRun,
    FedmdRun,
    LdpdlRun,
    LdpflRun,
    PateRun,
    PateTeachers,
    RknnRun,
    student_run,
    teacher_run,
)

# a loop-ablation variant's keys that choose its rows and inputs rather than FedMD's settings
ABLATION_SCOPE = ("name", "k", "datasets", "sampling")
LDPDL_TABLE_ARMS = tuple(TABLE_ARMS)  # paper 004 Table 1's result rows per entry


class DesignError(ValueError):
    """A config asks for something the design cannot make (named in the message)."""


PAGES = default_pages()  # the reproduction pages (pipelib.report.registry), in the default target
# Pages of their own command, not made by the default target (FedMD's budget and loop ablations: hours of CPU at
# the paper's size)
EXTRA_PAGES = own_command_pages()
# Paper 001's figure name -> the entries it draws on (the first also names its rounds tables)
FIGURE_P001 = {
    "clients": ("clients",),  # Figure 3
    "fraction_rounds": ("fraction",),  # Figure 4
    "epsilon": ("epsilon", "radius"),  # Figure 5 (a)-(d)
}


class Design:
    """Everything a validated ``config`` asks the workflow to make (its ``scenarios`` resolved: variants for
    other numbers of parties, repeats, audited canaries)."""

    PAGES, EXTRA_PAGES, FIGURE_P001 = PAGES, EXTRA_PAGES, FIGURE_P001

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
        # per teacher kind: what its answering job, the curator, the server's labeling and its student read
        # (beyond the rules' own inputs), and the config section of its student and curator
        self.TEACHERS = {
            "rknn": {
                "answers": self.rknn_party_inputs,
                "curate": self.rknn_curate_inputs,
                "label": self.rknn_label_inputs,
                "student": lambda wc: {},
                "settings": self.RKNN,
            },
            "pate": {
                "curate": self.pate_curate_inputs,
                "label": self.public_inputs,
                "student": self.pate_student_inputs,
                "settings": self.PATE,
            },
        }
        self.FIGURES = self.paper_figures()

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

    def nfdp_samples(self):
        """(scenario, sampling, k) for every NFDP sample the config asks for."""
        return [
            (name, sampling, k)
            for name, sc in self.SCENARIOS.items()
            if "nfdp" in sc
            for sampling in sc["nfdp"]["sampling"]
            for k in sc["nfdp"]["k"]
        ]

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

    def all_targets(self):
        return [
            *self.ingest_targets(),
            self.res("partitions.csv"),
            self.res("privacy_ledger.csv"),
            self.res("table2.csv"),
            self.res("table_rknn.csv"),
            self.res("compare.csv"),
            self.res("claims.csv"),
            *[f"docs/reproduction/{self.config['preset']}/{page}.md" for page in self.PAGES],
            self.res("table3.csv"),
            self.res("table4.csv"),
            self.res("table5.csv"),
            *[self.res(f"figures/{name}.png") for name in self.FIGURES],
            *([self.res("table_ldpdl.csv")] if self.ldpdl_table_entries() else []),
            *[self.res(f"figures/{name}.png") for name in self.ldpdl_figure_names()],
            *self.ldpfl_targets(),
            self.res("audit.csv"),
            self.res("figures/audit.png"),
            *[self.res(f"figures/compare_{sc}.png") for sc in self.compare_scenarios()],
        ]

    def n_outputs(self, scenario):
        """Public classes + the private task's classes (FedMD's shared output layer)."""
        sc = self.SCENARIOS[scenario]
        return raw.dataset(sc["public"]).classes + len(self.config["tasks"][sc["task"]]["classes"])

    def party_archs(self, scenario):
        archs = self.FEDMD["architectures"]
        return [archs[i % len(archs)] for i in self.party_ids(scenario)]

    def pretrained(self, scenario, arch, epochs=None):
        """The shared initialization of ``arch`` for ``scenario``: trained on the public dataset's train
        split, or, where the public and private data are one dataset (papers 003 and 004's splits: the
        other rows of the public pool are private), on the scenario's public pool alone (pretrain_pool).
        ``epochs`` other than the preset's (FedMD's budget ablation): pretrain/<public>/e<epochs>/.
        """
        sc = self.SCENARIOS[scenario]
        epochs = None if epochs is None else int(epochs)  # a path's wildcard is text
        if sc["public"] == sc["private"]:
            if epochs not in (None, self.FEDMD["pretrain"]["epochs"]):
                raise DesignError(
                    f"paper002.budget: pre-training epochs {epochs} on scenario {scenario!r}, whose public "
                    "pool is a slice of its private dataset, is not supported (only the preset's "
                    f"fedmd.pretrain.epochs = {self.FEDMD['pretrain']['epochs']})"
                )
            return self.res(f"pretrain_pool/{scenario}/{arch}-c{self.n_outputs(scenario)}.pt")
        variant = "" if epochs in (None, self.FEDMD["pretrain"]["epochs"]) else f"e{epochs}/"
        return self.res(f"pretrain/{sc['public']}/{variant}{arch}-c{self.n_outputs(scenario)}.pt")

    def fedmd_inputs(self, wildcards, epochs=None):
        """Party i's private input is its NFDP sample (nfdp) or all its records (np, ldp); nothing else.
        ``epochs``: the pre-trained models' (default: the path's ``pe``, else the preset's)."""
        scenario, run = wildcards.scenario, FedmdRun.parse(wildcards.run)
        epochs = dict(wildcards.items()).get("pe") if epochs is None else epochs
        if run.kind == "nfdp":
            parties = [f"{self.sample_dir(scenario, *run.sample)}/party-{i}.parquet" for i in self.party_ids(scenario)]
        else:
            parties = [self.party_table(scenario, i) for i in self.party_ids(scenario)]
        inputs = {
            "parties": parties,
            "models": [self.pretrained(scenario, arch, epochs) for arch in sorted(set(self.party_archs(scenario)))],
            **self.public_inputs(wildcards),
            "test": f"{self.partition_dir(scenario)}/test.parquet",
        }
        if run.sample:  # nfdp: its own ledger; ldp: the ledger of the NFDP row it is calibrated to
            inputs["ledger"] = f"{self.sample_dir(scenario, *run.sample)}/ledger.csv"
        return inputs

    def fedmd_params(self):
        """The FedMD knobs a row depends on (pre-training and centralized settings act through their own files)."""
        return {k: v for k, v in self.FEDMD.items() if k not in ("pretrain", "centralized", "runtime", "compare")}

    def table2_rows(self):
        """(dataset label, run) of every FedMD row of results/table2.csv."""
        rows = []
        for label, spec in self.TABLE2.items():
            rows.append((label, FedmdRun("np").name))
            rows += [(label, FedmdRun.nfdp(spec["sampling"], k).name) for k in spec["k"]]
            rows += [(label, FedmdRun.ldp(spec["sampling"], k).name) for k in spec.get("ldp_k", [])]
        return rows

    def fedmd_dir(self, label, run, repeat=0):
        scenario = replicate(self.TABLE2[label]["scenario"], repeat)
        return self.res(f"fedmd/{scenario}/{self.FEDMD['answer']}/{run}")

    def table2_repeats(self):
        """(dataset label, run, repeat) of every repeat (table2.<label>.seeds > 1) of a Table 2 NP or NFDP row."""
        return [
            (label, run, i)
            for label, run in self.table2_rows()
            if FedmdRun.parse(run).kind != "ldp"
            for i in range(1, self.TABLE2[label].get("seeds", 1))
        ]

    def centralized_runs(self):
        """(dataset label, arch, result dir) of every centralized baseline Table 2 needs."""
        return [
            (label, arch, self.res(f"centralized/{spec['scenario']}/{arch}"))
            for label, spec in self.TABLE2.items()
            for arch in sorted(set(self.party_archs(spec["scenario"])))
        ]

    def dpsgd_dirs(self):
        """The result folder of every DP-SGD run: per scenario of dpsgd.scenarios that runs, per epsilon."""
        return [
            self.res(f"dpsgd/{scenario}/{DpsgdRun(self.DPSGD['arch'], eps).name}")
            for scenario in dpsgd_scenarios(self.config)
            for eps in self.DPSGD["epsilon"]
        ]

    def dpsgd_inputs(self, wildcards):
        """Every party's records (pooled by the job) and the test set; the public pre-trained model where the
        scenario's public data is another dataset (else DP-SGD starts from scratch)."""
        scenario = wildcards.scenario
        out = {
            "parties": [self.party_table(scenario, i) for i in self.party_ids(scenario)],
            "test": self.res(f"partitions/{scenario}/test.parquet"),
        }
        if dpsgd_pretrained(self.config, scenario):
            out["model"] = self.pretrained(scenario, wildcards.arch)
        return out

    def represent_dir(self, scenario, encoder):
        return self.res(f"represent/{scenario}/{encoder}")

    def public_side(self, scenario):
        """Where a scenario's public-data stages (encoders, public embeddings, queries) live: an audited
        variant shares its base scenario's, since its public pool is the same (docs/audit.md).
        """
        return self.SCENARIOS[scenario].get("audit_of", scenario)

    def encoder_models(self, scenario, encoder):
        """The fitted models an encoder's embeddings need: its chain's (a UMAP encoder's input first, then
        its own); HOG has none."""
        chain = encoder_chain(self.RKNN["encoders"], encoder)
        return [
            f"{self.represent_dir(scenario, e)}/encoder.pt" for e in chain if self.RKNN["encoders"][e]["kind"] != "hog"
        ]

    def encoder_model(self, wildcards):
        """The fitted models embedding with ``wildcards.encoder`` reads."""
        return self.encoder_models(self.public_side(wildcards.scenario), wildcards.encoder)

    def encoder_base_models(self, wildcards):
        """The fitted models of the encoder's input (a UMAP encoder reduces its input's embeddings)."""
        enc = self.RKNN["encoders"][wildcards.encoder]
        return self.encoder_models(wildcards.scenario, enc["input"]) if "input" in enc else []

    def encoder_settings(self, wildcards):
        return resolved_encoder(self.RKNN["encoders"], wildcards.encoder)

    def rknn_teacher(self, spec):
        """(encoder, s, k) of a reverse k-NN teacher's name (pipelib.runs.RknnRun)."""
        run = RknnRun.parse(spec)
        return run.encoder, str(run.s), str(run.k)

    def rknn_party_inputs(self, wc):
        """What a party's reverse k-NN teacher reads besides its own table: its own embeddings, the queries."""
        encoder, s, _ = self.rknn_teacher(wc.teacher)
        return {
            "embeddings_npy": f"{self.represent_dir(wc.scenario, encoder)}/party-{wc.party}.npy",
            "centers_npy": f"{self.represent_dir(self.public_side(wc.scenario), encoder)}/s{s}/centers.npy",
        }

    def rknn_label_inputs(self, wc):
        """What the server's labeling reads besides the aggregate: the public samples' cluster ids."""
        encoder, s, _ = self.rknn_teacher(wc.teacher)
        return {"assign_path": f"{self.represent_dir(self.public_side(wc.scenario), encoder)}/s{s}/assign.parquet"}

    def rknn_curate_inputs(self, wc):
        """The curator of a reverse k-NN release reads every party's raw answers."""
        d = self.distill_dir(wc.scenario, wc.teacher)
        return {"answers": [f"{d}/answers/party-{i}.npy" for i in self.party_ids(wc.scenario)]}

    def pate_votes_inputs(self, wc):
        """PATE's teachers' job reads the teachers (rule ldpdl_teachers) and the public pool."""
        return {
            **self.teachers_files(wc.scenario, PateTeachers.of(wc).design),
            **self.public_inputs(wc),
            **self.teacher_encoder_files(wc.scenario, PateTeachers.of(wc).design),
        }

    def pate_curate_inputs(self, wc):
        """PATE's curator reads the teachers' votes and their summary (the pool's size, the teachers)."""
        teachers = self.teachers_files(wc.scenario, PateTeachers.of(wc).design)
        return {
            "answers": [f"{self.distill_dir(wc.scenario, wc.teacher)}/answers/teachers.npy"],
            "teachers_info": teachers["teachers_info"],
        }

    def pate_student_inputs(self, wc):
        """PATE's student reads the curator's release record (sigma, the teachers, the pool's size)."""
        return {"guarantee": f"{self.distill_dir(wc.scenario, wc.teacher, wc.mech)}/release/curated.guarantee.json"}

    def teacher_kind(self, wc):
        """The TEACHERS entry of a distillation job's ``teacher`` wildcard."""
        return self.TEACHERS[teacher_run(wc.teacher).kind]

    def distill_dir(self, scenario, teacher, mech=None):
        d = self.res(f"distill/{scenario}/{teacher}")
        return d if mech is None else f"{d}/{mech}"

    def mechanism_dir(self, row):
        return "none" if row["mechanism"] == "none" else f"{row['mechanism']}-eps{float(row['epsilon'])!r}"

    def rknn_rows(self, part="table"):
        """(config row, result dir) of every row of results/table_rknn.csv (``part`` compare: of the rows
        on other methods' splits that run.scenarios keeps, for compare.csv only)."""
        rows = self.RKNN[part]
        if part == "compare":
            running = kept(self.config, [row["scenario"] for row in rows])
            rows = [row for row in rows if row["scenario"] in running]
        return [
            (
                row,
                self.distill_dir(
                    row["scenario"],
                    RknnRun(row["encoder"], int(row["s"]), int(row["k"])).name,
                    self.mechanism_dir(row),
                ),
            )
            for row in rows
        ]

    def is_local(self, mech):
        return mech.split("-eps")[0] in vocab.LOCAL_MECHANISMS

    def aggregate_inputs(self, wc):
        """Privatized releases only: the parties' local releases, or the curator's noisy sum."""
        d = self.distill_dir(wc.scenario, wc.teacher, wc.mech)
        if self.is_local(wc.mech):
            names = [f"{d}/release/party-{i}" for i in self.party_ids(wc.scenario)]
        else:
            names = [f"{d}/release/curated"]
        ext = ".json" if self.is_local(wc.mech) else ".npy"
        return {
            "releases": [f"{n}{ext}" for n in names],
            "guarantees": [f"{n}.guarantee.json" for n in names],
        }

    def release_files(self):
        """Every file in which privatizing jobs recorded the guarantees of their releases: the NFDP samples
        of the config's scenarios and of every FedMD-NFDP row (their per-sample ledgers), FedMD-LDP rows'
        answers, every distillation row's local releases or curated sum (PATE's labels among them), LDP-DL's answers,
        and every LDP-FL run's per-client records."""
        samples = self.nfdp_samples() + self.repeat_samples()
        files = []
        for path in self.result_files():
            parts = Path(path).parent.relative_to(self.RESULTS).parts
            if parts[0] == "fedmd":
                _, scenario, _, name = parts
                run = FedmdRun.parse(name)
                if run.kind == "nfdp":
                    samples.append((scenario, *run.sample))
                elif run.kind == "ldp":
                    files.append(f"{Path(path).parent}/releases.json")
            elif parts[0] == "distill":
                _, scenario, _, mech = parts
                names = (
                    [f"release/party-{i}" for i in self.party_ids(scenario)]
                    if self.is_local(mech)
                    else ["release/curated"]
                )
                files += [f"{Path(path).parent}/{n}.guarantee.json" for n in names]
            elif parts[0] == "ldpdl":
                files += self.ldpdl_release_guarantees(path)
            elif parts[0] in ("ldpfl", "dpsgd"):
                files.append(f"{Path(path).parent}/releases.json")
        files = [f"{self.sample_dir(*key)}/ledger.csv" for key in dict.fromkeys(samples)] + files
        return list(dict.fromkeys(files))

    def repeat_samples(self):
        """(scenario, sampling, k) of the NFDP samples of paper 002's tables' repeats (paper002.seeds)."""
        out = []
        for e in self.table3_entries() + self.table4_entries() + self.table5_entries() + self.figure2d_entries():
            for path in e["repeats"]:
                _, scenario, _, name = Path(path).parent.relative_to(self.RESULTS).parts
                run = FedmdRun.parse(name)
                out += [(scenario, *run.sample)] if run.kind == "nfdp" else []
        return out

    def result_files(self):
        """Every result row file of every method the config runs."""
        files = [f"{self.fedmd_dir(label, run)}/result.json" for label, run in self.table2_rows()]
        files += [self.fedmd_result(sc, self.FEDMD["answer"], run) for sc, run in fedmd_compare_runs(self.config)]
        files += [f"{d}/result.json" for _, _, d in self.centralized_runs()]
        files += [f"{d}/result.json" for part in ("table", "compare") for _, d in self.rknn_rows(part)]
        files += [e["path"] for e in self.paper_entries()]
        files += [e[k] for e in self.ldpdl_table_entries() for k in LDPDL_TABLE_ARMS if k in e]
        files += [e["path"] for e in self.ldpdl_figure_entries()]
        files += self.ldpdl_compare_paths()
        files += self.ldpfl_paths()
        files += self.ldpfl_compare_paths()
        files += [f"{d}/result.json" for d in self.dpsgd_dirs()]
        return list(dict.fromkeys(files))

    def compare_scenarios(self):
        """The defined scenarios whose result rows compare.csv holds (one figure each)."""
        found = [Path(p).relative_to(self.RESULTS).parts[1] for p in self.result_files()]
        return sorted({sc for sc in found if sc in self.config["scenarios"]})

    def fedmd_result(self, scenario, answer, run):
        return self.res(f"fedmd/{scenario}/{answer}/{run}/result.json")

    def nfdp_run(self, sampling, k):
        return FedmdRun.nfdp(sampling, k).name

    def paper002_runs(self, scenario, answer, run):
        """A row of paper 002's Tables 3-5 or Figure 2(d): its result file (``path``) and its repeats' on the
        scenario's other seeds (``repeats``, paper002.seeds)."""
        return {
            "path": self.fedmd_result(scenario, answer, run),
            "repeats": [self.fedmd_result(replicate(scenario, i), answer, run) for i in range(1, self.P002["seeds"])],
        }

    def runs_of(self, entries):
        """Every result file and rounds table of ``entries`` and of their repeats (a rule's inputs)."""
        results = [p for e in entries for p in [e["path"], *e.get("repeats", [])]]
        return results + [p.replace("result.json", "rounds.parquet") for p in results]

    def table3_entries(self):
        """Answer types x number of parties, at paper002.k (a scenario variant for another N)."""
        return [
            {
                "dataset": label,
                "parties": n,
                "answer": answer,
                **self.paper002_runs(
                    party_variant(self.config, spec["scenario"], n),
                    answer,
                    self.nfdp_run(spec["sampling"], self.P002["k"]),
                ),
            }
            for label, spec in self.TABLE2.items()
            for answer in self.P002["table3"]["answers"]
            for n in self.P002["table3"]["parties"]
        ]

    def table4_entries(self):
        """IID (the table2 scenario) against non-IID, at paper002.k."""
        answer, run = self.P002["table4"]["answer"], lambda spec: self.nfdp_run(spec["sampling"], self.P002["k"])
        entries = [
            {
                "dataset": label,
                "setting": "IID",
                **self.paper002_runs(spec["scenario"], answer, run(spec)),
            }
            for label, spec in self.TABLE2.items()
        ]
        entries += [
            {
                "dataset": label,
                "setting": "non-IID",
                **self.paper002_runs(scenario, answer, run(self.TABLE2[label])),
            }
            for label, scenario in self.P002["table4"]["noniid"].items()
            if label in self.TABLE2 and scenario in self.SCENARIOS
        ]
        return entries

    def table5_entries(self):
        """Sampling with against without replacement, at the k of each dataset label."""
        answer = self.P002["table5"]["answer"]
        return [
            {
                "dataset": label,
                "sampling": sampling,
                "k": k,
                **self.paper002_runs(self.TABLE2[label]["scenario"], answer, self.nfdp_run(sampling, k)),
            }
            for label, k in self.P002["table5"]["k"].items()
            if label in self.TABLE2
            for sampling in vocab.SAMPLINGS
        ]

    def figure2d_entries(self):
        """Accuracy against the number of parties, at paper002.k."""
        answer = self.P002["figure2d"]["answer"]
        return [
            {
                "dataset": label,
                **self.paper002_runs(
                    party_variant(self.config, spec["scenario"], n),
                    answer,
                    self.nfdp_run(spec["sampling"], self.P002["k"]),
                ),
            }
            for label, spec in self.TABLE2.items()
            for n in self.P002["figure2d"]["parties"]
        ]

    def budget_result(self, scenario, run, rounds, queries, epochs):
        """A FedMD row at a distillation budget and pre-training: the Table 2 run where they are the preset's."""
        if (rounds, queries, epochs) == (
            self.FEDMD["rounds"],
            self.FEDMD["public_per_round"],
            self.FEDMD["pretrain"]["epochs"],
        ):
            return self.fedmd_result(scenario, self.FEDMD["answer"], run)
        point = BudgetPoint(rounds, queries, epochs).name
        return self.res(f"fedmd_budget/{scenario}/{self.FEDMD['answer']}/{point}/{run}/result.json")

    def budget_entries(self):
        """FedMD-NP and FedMD-NFDP at paper002.budget.k on every table2 dataset, at every budget point."""
        k = self.P002["budget"]["k"]
        return [
            {
                "dataset": label,
                "run": run,
                "rounds": rounds,
                "public_per_round": queries,
                "pretrain_epochs": epochs,
                "path": self.budget_result(spec["scenario"], run, rounds, queries, epochs),
            }
            for label, spec in self.TABLE2.items()
            for rounds, queries, epochs in self.P002["budget"]["points"]
            for run in ("np", self.nfdp_run(spec["sampling"], k))
        ]

    def ablation_inputs(self, wildcards):
        """A loop-ablation row reads what its Table 2 row reads, with models pre-trained at the ablation's
        epochs, and the parties' samples drawn by the variant's ``sampling`` where it sets one."""
        inputs = self.fedmd_inputs(wildcards, self.P002["ablation"]["budget"][2])
        sampling = self.ablation_variant(wildcards.variant).get("sampling")
        run = FedmdRun.parse(wildcards.run)
        if sampling and run.kind == "nfdp":
            sample = self.sample_dir(wildcards.scenario, sampling, run.k)
            inputs["parties"] = [f"{sample}/party-{i}.parquet" for i in self.party_ids(wildcards.scenario)]
            inputs["ledger"] = f"{sample}/ledger.csv"
        return inputs

    def ablation_variant(self, name):
        """paper002.ablation's variant ``name`` (its entry: name, settings, scope)."""
        return next(v for v in self.P002["ablation"]["variants"] if v["name"] == name)

    def ablation_settings(self, variant):
        """FedMD's settings of a loop-ablation variant: the preset's, at the ablation's budget, with the
        variant's overrides (its ``sampling`` acts through its inputs; ``k`` and ``datasets`` choose its rows)."""
        rounds, queries, _ = self.P002["ablation"]["budget"]
        overrides = {k: v for k, v in self.ablation_variant(variant).items() if k not in ABLATION_SCOPE}
        return {**self.fedmd_params(), "rounds": rounds, "public_per_round": queries, **overrides}

    def pooled_result(self, scenario, sampling, k, pretrain_epochs, epochs, arch):
        """The pooled ceiling of an NFDP row: ``arch`` trained on the union of its parties' samples."""
        return self.res(
            f"centralized_pooled/{scenario}/{sampling}-k{k}/pe{pretrain_epochs}-e{epochs}/{arch}/result.json"
        )

    def ablation_entries(self):
        """paper002.ablation: every variant of FedMD-NFDP at each k on every table2 dataset (a variant's own ``k``
        and ``datasets`` narrow them; its ``settings``: the keys it sets), and the pooled ceilings (Centralized on
        the union of the parties' samples) of each (dataset, k, draw) a variant runs, one entry per architecture."""
        a = self.P002["ablation"]
        entries = []
        for label, spec in self.TABLE2.items():
            scenario = spec["scenario"]
            for k in a["k"]:
                run, paper_k = self.nfdp_run(spec["sampling"], k), a.get("paper_k", {}).get(k, k)
                variants = [v for v in a["variants"] if k in v.get("k", [k]) and label in v.get("datasets", [label])]
                entries += [
                    {
                        "dataset": label,
                        "k": k,
                        "variant": v["name"],
                        "reference": a["variants"][0]["name"],
                        "paper_k": paper_k,
                        "settings": {key: x for key, x in v.items() if key not in ("name", "k", "datasets")},
                        "pretrain_epochs": a["budget"][2],
                        "path": self.res(f"fedmd_ablation/{scenario}/{v['name']}/{run}/result.json"),
                    }
                    for v in variants
                ]
                entries += [
                    {
                        "dataset": label,
                        "k": k,
                        "paper_k": paper_k,
                        "pooled": [pe, epochs],
                        "sampling": sampling,
                        "path": self.pooled_result(scenario, sampling, k, pe, epochs, arch),
                    }
                    for sampling in dict.fromkeys(v.get("sampling", spec["sampling"]) for v in variants)
                    for pe, epochs in a["pooled"]
                    for arch in sorted(set(self.party_archs(scenario)))
                ]
        return entries

    def rknn_result(self, scenario, encoder, s, k, mech):
        return f"{self.distill_dir(scenario, RknnRun(encoder, int(s), int(k)).name, mech)}/result.json"

    def p003_sweep_entries(self):
        """Paper 003 Figure 2(a)-(c): s at k = 1, and k at s = at_s; central Laplace at the row's epsilon."""
        entries = []
        for label, v in self.P003["figure2abc"].items():
            if v["scenario"] not in self.SCENARIOS:
                continue
            mech = f"laplace-eps{float(v['epsilon'])!r}"
            entries += [
                {
                    "dataset": label,
                    "sweep": "s",
                    "path": self.rknn_result(v["scenario"], v["encoder"], s, 1, mech),
                }
                for s in v["s"]
            ]
            entries += [
                {
                    "dataset": label,
                    "sweep": "k",
                    "path": self.rknn_result(v["scenario"], v["encoder"], v["at_s"], k, mech),
                }
                for k in v["k"]
            ]
        return entries

    def p003_local_entries(self):
        """Paper 003 Figure 2(d): local mechanisms at s = 10, k = 1 over epsilon."""
        d = self.P003["figure2d"]
        return [
            {
                "dataset": label,
                "path": self.rknn_result(v["scenario"], v["encoder"], 10, 1, f"{m}-eps{float(e)!r}"),
            }
            for label, v in d["datasets"].items()
            if v["scenario"] in self.SCENARIOS
            for m in d["mechanisms"]
            for e in d["epsilon"]
        ]

    def paper_entries(self):
        return (
            self.table3_entries()
            + self.table4_entries()
            + self.table5_entries()
            + self.figure2d_entries()
            + self.p003_sweep_entries()
            + self.p003_local_entries()
        )

    def figure_outputs(self, name):
        return {
            kind: self.res(f"figures/{name}.{ext}") for kind, ext in (("png", "png"), ("svg", "svg"), ("data", "csv"))
        }

    def paper_figures(self):
        """The figures this run selection has rows for (the closed forms always)."""
        has = {
            "p002_privacy_vs_parties": True,
            "p002_accuracy_vs_parties": bool(self.figure2d_entries()),
            "p002_rounds": any(self.P002["k"] in spec["k"] for spec in self.TABLE2.values()),
            "p002_privacy_vs_k": True,
            "p003_queries_and_neighbours": bool(self.p003_sweep_entries()),
            "p003_local_dp": bool(self.p003_local_entries()),
        }
        return [name for name, ok in has.items() if ok]

    def owner_design(self, owners=None):
        """The owners of LDP-DL runs: ``L<owners>`` (overlapping owners, ldpdl.owners) or ``parties``
        (the scenario's parties; ldpdl.owners = parties, compare and audit runs)."""
        o = self.LDPDL["owners"]
        if o == "parties":
            return "parties"
        return f"L{o['count'] if owners is None else owners}"

    def pate_run(self, eps, design=None):
        """The PATE run at ``eps`` over ``design``'s teachers (default ldpdl.pate.teachers), each voting on
        the S x T queries LDP-DL's runs make."""
        queries = self.LDPDL["queries_per_iteration"] * self.LDPDL["iterations"]
        return PateRun(float(eps), design or self.pate_design(), queries)

    def pate_design(self):
        """PATE's teachers: ``T<n>`` disjoint shards of the pool (ldpdl.pate.teachers) or ``parties``."""
        t = self.LDPDL["pate"]["teachers"]
        return "parties" if t == "parties" else f"T{t}"

    def ldpdl_dir(self, scenario, mech, eps, nq, qs, design):
        return self.res(f"ldpdl/{scenario}/{LdpdlRun(mech, eps, nq, design, qs)}")

    def ldpdl_shape(self, qs):
        """(queries per iteration, iterations) of a run.  Without AQS the queries do not depend on the
        student, so the S x T random queries are drawn at once and one student is trained on them: the
        same final student as T rounds of S (each retrains from scratch on all queries so far).
        """
        s, t = self.LDPDL["queries_per_iteration"], self.LDPDL["iterations"]
        return (s, t) if qs == "aqs" else (s * t, 1)

    def ldpdl_result(self, scenario, mech, eps, nq, qs, design=None):
        """A run's result row: its last iteration's student."""
        d = self.ldpdl_dir(scenario, mech, eps, nq, qs, design or self.owner_design())
        return f"{d}/iter-{self.ldpdl_shape(qs)[1]}/result.json"

    def ldpdl_release_guarantees(self, result):
        """The release records behind a run's result row (every iteration up to the row's)."""
        run, last = Path(result).parent.parent, int(Path(result).parent.name.split("-")[1])
        return [f"{run}/iter-{t}/answers.guarantee.json" for t in range(1, last + 1)]

    def pate_result(self, scenario, eps, design=None):
        run = self.pate_run(eps, design)
        return f"{self.distill_dir(scenario, run.teachers, run.mechanism)}/result.json"

    def teachers_files(self, scenario, design):
        """The owners' teachers of a design (for the owners' and the curator's jobs only) and their summary."""
        d = self.res(f"ldpdl/{scenario}/teachers-{design}")
        return {"teachers": f"{d}/teachers.npz", "teachers_info": f"{d}/teachers.json"}

    def teacher_settings(self, scenario, design=None):
        """The teachers' settings for a scenario: its private dataset's encoder and the ridge penalty; for
        PATE's own teachers (design ``S<n>``) the CNN they train from scratch (ldpdl.pate.scratch)."""
        if design is not None and design.startswith("S"):
            return {"scratch": self.LDPDL["pate"]["scratch"]}
        t = self.LDPDL["teacher"]
        encoder = t["by_dataset"].get(self.SCENARIOS[scenario]["private"], t["encoder"])
        return {"encoder": encoder, "ridge": encoder.get("ridge", t["ridge"])}

    def pate_teacher_settings(self, wc):
        """The settings of the teachers of a PATE job's ``teacher`` wildcard."""
        return self.teacher_settings(wc.scenario, PateTeachers.of(wc).design)

    def teacher_encoder_files(self, scenario, design=None):
        """The frozen encoder the teachers of ``scenario`` read (rule ldpdl_encoder), if not HOG; none for
        PATE's CNNs from scratch."""
        dataset = self.SCENARIOS[scenario]["private"]
        if "encoder" not in (s := self.teacher_settings(scenario, design)) or s["encoder"]["kind"] != "transfer":
            return {}
        return {"encoder": self.res(f"ldpdl/encoder-{dataset}/encoder.pt")}

    def teacher_encoder_settings(self, dataset):
        """The settings of the teachers' encoder of a private dataset (a ``transfer`` entry of by_dataset)."""
        return self.LDPDL["teacher"]["by_dataset"][dataset]

    def teacher_records(self, design):
        """Records per owner of an ``L<n>`` design (0: the design's shards say)."""
        return self.LDPDL["owners"]["records"] if design.startswith("L") else 0

    def run_dir(self, wc):
        return self.ldpdl_dir(wc.scenario, wc.ldmech, wc.eps, wc.nq, wc.qs, wc.design)

    def queries_of(self, wc, t):
        """The queries of iteration t: the plan's first draw, then each student's choice of the next."""
        d = self.run_dir(wc)
        return f"{d}/iter-1/queries.npy" if t == 1 else f"{d}/iter-{t - 1}/next.npy"

    def design_owners(self, scenario, design):
        """How many owners a design has."""
        return self.SCENARIOS[scenario]["parties"] if design == "parties" else int(design[1:])

    def ldpdl_table_entries(self):
        """Paper 004 Table 1: per dataset and epsilon, LDP-DL (the table's mechanism, AQS) and PATE in two
        arms: ``pate`` on LDP-DL's teacher family (ldpdl.pate.teachers disjoint shards), ``pate_own`` on
        PATE's own teachers (CNNs from scratch on the same shards; only with ldpdl.pate.scratch); ``ceiling``:
        the dataset's student on true labels (rule ldpdl_ceiling, the noise-free reference).
        ``teachers``: each arm's teacher model in words."""
        t, own = self.LDPDL["table"], self.pate_own_design()
        return [
            {
                "dataset": label,
                "epsilon": float(e),
                "ldpdl": self.ldpdl_result(sc, t["mechanism"], e, self.LDPDL["per_query"], "aqs"),
                "pate": self.pate_result(sc, e),
                **({"pate_own": self.pate_result(sc, e, own)} if own else {}),
                "ceiling": self.res(f"ldpdl/{sc}/ceiling/result.json"),
                "teachers": {
                    "ldpdl": self.teacher_model(sc),
                    "pate": self.teacher_model(sc),
                    **({"pate_own": self.teacher_model(sc, own)} if own else {}),
                },
            }
            for label, sc in t["datasets"].items()
            if sc in self.SCENARIOS
            for e in t["epsilon"]
        ]

    def pate_own_design(self):
        """``S<n>``: PATE's own teachers on the shards of ``T<n>`` (ldpdl.pate.scratch set), else None."""
        p = self.LDPDL["pate"]
        return f"S{p['teachers']}" if p.get("scratch") and p["teachers"] != "parties" else None

    def teacher_model(self, scenario, design=None):
        """A scenario's teachers (of ``design``) in words, for the tables' ``teacher_model`` column."""
        return teacher_model(self.teacher_settings(scenario, design))

    def owners_sweep_result(self, sc, mech, eps, qs, n):
        """Figures 4-6 (c): the run with L = n owners (overlapping owners), or on the scenario dealt to n
        parties (ldpdl.owners = parties)."""
        if self.LDPDL["owners"] == "parties":
            return self.ldpdl_result(
                party_variant(self.config, sc, n), mech, eps, self.LDPDL["per_query"], qs, "parties"
            )
        return self.ldpdl_result(sc, mech, eps, self.LDPDL["per_query"], qs, self.owner_design(n))

    def ldpdl_figure_entries(self):
        """Figures 4-6: accuracy against epsilon, N_Q and L; every mechanism with and without AQS."""
        f = self.LDPDL["figures"]
        out = []
        for label, sc in f["datasets"].items():
            if sc not in self.SCENARIOS:
                continue
            for mech in f["mechanisms"]:
                for qs in ("aqs", "random"):
                    common = {"dataset": label, "mechanism": mech, "aqs": qs == "aqs"}
                    out += [
                        {
                            **common,
                            "sweep": "epsilon",
                            "x": float(e),
                            "path": self.ldpdl_result(sc, mech, e, self.LDPDL["per_query"], qs),
                        }
                        for e in f["epsilon"]
                    ]
                    out += [
                        {
                            **common,
                            "sweep": "per_query",
                            "x": n,
                            "path": self.ldpdl_result(sc, mech, f["at_epsilon"], n, qs),
                        }
                        for n in f["per_query"]
                    ]
                    out += [
                        {
                            **common,
                            "sweep": "owners",
                            "x": n,
                            "path": self.owners_sweep_result(sc, mech, f["at_epsilon"], qs, n),
                        }
                        for n in f["owners"]
                    ]
        return out

    def ldpdl_compare_paths(self):
        """LDP-DL (the table's mechanism, AQS) and PATE on other methods' splits: compare.csv's rows only."""
        c = self.LDPDL["compare"]
        return [
            path
            for sc in ldpdl_compare_scenarios(self.config)
            for e in c["epsilon"]
            for path in (
                self.ldpdl_result(sc, self.LDPDL["table"]["mechanism"], e, c["per_query"], "aqs", "parties"),
                self.pate_result(sc, e, "parties"),
            )
        ]

    def ldpdl_figure_names(self):
        return [
            f"p004_{self.slug(label)}" for label in dict.fromkeys(e["dataset"] for e in self.ldpdl_figure_entries())
        ]

    def slug(self, label):
        return re.sub(r"[^a-z0-9]+", "", label.lower())

    def ldpfl_dir(self, scenario, run, fraction, rounds):
        return self.res(f"ldpfl/{scenario}/{run}/f{float(fraction)!r}-m{int(rounds)}")

    def ldpfl_dataset(self, scenario):
        """The ldpfl.datasets entry of a scenario or of one of its variants (pipelib.config)."""
        return ldpfl_dataset_of(self.config, scenario)

    def ldpfl_entries(self):
        """Every LDP-FL run the config asks for: Table 1 (noise-free, and fixed vs adaptive range at each
        epsilon), Figure 3 (clients), Figure 4 (fraction of clients; rounds come from the runs' histories),
        Figure 5 (epsilon; radius of a fixed range)."""
        out = []
        for label, d in self.LDPFL["datasets"].items():
            sc = d["scenario"]
            if sc not in self.SCENARIOS:
                continue
            fixed = tuple(d["fixed_range"])
            shown = "adaptive" if d["figure_range"] == "adaptive" else fixed
            at = d["figure_epsilon"]

            def add(artifact, eps, radius, scenario=sc, fraction=self.LDPFL["fraction"], d=d, label=label, **extra):
                run = LdpflRun(eps, radius).name
                path = f"{self.ldpfl_dir(scenario, run, fraction, d['rounds'])}/result.json"
                out.append({"artifact": artifact, "dataset": label, "run": run, "path": path} | extra)

            add("table", None, None, epsilon=None, range="none")
            for eps in self.LDPFL["table_epsilon"]:
                add("table", eps, fixed, epsilon=float(eps), range="fixed")
                add("table", eps, "adaptive", epsilon=float(eps), range="adaptive")
            for n in d["clients"]:
                variant = party_variant(self.config, sc, n)
                add("clients", at, shown, scenario=variant, x=n, private=True)
                add("clients", None, None, scenario=variant, x=n, private=False)
            for fr in self.LDPFL["fractions"]:
                add("fraction", at, shown, fraction=fr, x=float(fr), private=True)
            for eps in d["epsilons"]:
                add("epsilon", eps, shown, x=float(eps), private=True)
            if self.LDPFL["radius"]["dataset"] == label:
                for r in self.LDPFL["radius"]["r"]:
                    add(
                        "radius",
                        self.LDPFL["radius"]["epsilon"],
                        (0.0, r),
                        x=float(r),
                        private=True,
                    )
        return out

    def ldpfl_compare_paths(self):
        """LDP-FL on other methods' splits (noise-free and adaptive range): compare.csv's rows only."""
        fraction = self.LDPFL["fraction"]
        runs = [
            (sc, LdpflRun(eps, None if eps is None else "adaptive").name) for sc, eps in ldpfl_compare_runs(self.config)
        ]
        return [
            f"{self.ldpfl_dir(sc, run, fraction, self.ldpfl_dataset(sc)[1]['rounds'])}/result.json" for sc, run in runs
        ]

    def ldpfl_paths(self, artifact=None):
        entries = [e for e in self.ldpfl_entries() if artifact in (None, e["artifact"])]
        return list(dict.fromkeys(e["path"] for e in entries))

    def p001_paths(self, name):
        """The result rows a paper-001 figure draws on."""
        return list(dict.fromkeys(p for a in self.FIGURE_P001[name] for p in self.ldpfl_paths(a)))

    def ldpfl_targets(self):
        """Table 1 and the figures that have runs under this config."""
        kinds = {e["artifact"] for e in self.ldpfl_entries()}
        return [
            *([self.res("table_ldpfl.csv")] if "table" in kinds else []),
            *[self.res(f"figures/p001_{name}.png") for name, arts in self.FIGURE_P001.items() if kinds & set(arts)],
        ]

    def page_figures(self):
        """Every figure the reproduction pages show."""
        kinds = {e["artifact"] for e in self.ldpfl_entries()}
        p001 = [f"p001_{n}" for n, arts in self.FIGURE_P001.items() if kinds & set(arts)]
        return self.FIGURES + self.ldpdl_figure_names() + p001

    def page_inputs(self, wildcards):
        """What one reproduction page is generated from (its registry entry, pipelib.report.registry): its
        tables and its figures' copies beside it (each page needs only its own paper's outputs, so it can be
        built as soon as they are)."""
        page = PAGE_REGISTRY[wildcards.page]
        made = {"table_ldpdl": bool(self.ldpdl_table_entries()), "table_ldpfl": bool(self.ldpfl_paths("table"))}
        tables = [t for t in page.tables if t not in page.optional or made[t]]
        if page.figures == "compare":
            names = [f"compare_{sc}" for sc in self.compare_scenarios()] + ["audit"]
        elif page.figures == "budget":
            names = ["p002_budget"] if self.budget_entries() else []
        elif page.figures.startswith("prefix:"):
            names = [n for n in self.page_figures() if n.startswith(page.figures.removeprefix("prefix:"))]
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
        tables = ["table2", "table3", "table4", "table5", "table_rknn"]
        tables += ["table_ldpdl"] if self.ldpdl_table_entries() else []
        tables += ["table_ldpfl"] if self.ldpfl_paths("table") else []
        figures = [*self.FIGURES, *self.ldpdl_figure_names()]
        figures += [Path(p).stem for p in self.ldpfl_targets() if "/figures/" in p]
        return {
            **{t: self.res(f"{t}.csv") for t in tables},
            **{f: self.res(f"figures/{f}.csv") for f in dict.fromkeys(figures)},
        }

    def audit_rknn_entries(self):
        """Per audited reverse k-NN row: its audited scenario, teacher, mechanism and the audit's output."""
        out = []
        for row in audit_rows(self.config, "rknn"):
            scenario = audit_variant(self.config, row["scenario"], row["mechanism"])
            teacher, mech = RknnRun(row["encoder"], int(row["s"]), int(row["k"])).name, self.mechanism_dir(row)
            out.append(
                {
                    "scenario": scenario,
                    "teacher": teacher,
                    "mech": mech,
                    "path": self.res(AuditRun("distill", scenario, f"{teacher}/{mech}").path),
                }
            )
        return out

    def audit_fedmd_entries(self):
        """Per audited FedMD row: its audited scenario, answer, run and the audit's output."""
        out = []
        for row in audit_rows(self.config, "fedmd"):
            scenario = audit_variant(self.config, row["scenario"], row["run"])
            audit = AuditRun("fedmd", scenario, f"{row['answer']}/{row['run']}")
            out.append({"scenario": scenario, "answer": row["answer"], "run": row["run"], "path": self.res(audit.path)})
        return out

    def audit_fedmd_inputs(self, wc):
        """The auditor reads the canary list, the parties' final models and party 0's sample ledger."""
        inputs = {
            "canaries": f"{self.partition_dir(wc.scenario)}/canaries.parquet",
            "models": self.res(f"fedmd/{wc.scenario}/{wc.answer}/{wc.run}/models.pt"),
            "ledger": [],
        }
        run = FedmdRun.parse(wc.run)
        if run.kind == "nfdp":
            inputs["ledger"] = [f"{self.sample_dir(wc.scenario, *run.sample)}/party-0.ledger.json"]
        return inputs

    def audit_dpsgd_entries(self):
        """Per audited DP-SGD run: its audited scenario (replace canaries), epsilon and the audit's output."""
        out = []
        for row in audit_rows(self.config, "dpsgd"):
            scenario = audit_variant(self.config, row["scenario"], "dpsgd")
            audit = AuditRun("dpsgd", scenario, DpsgdRun(self.DPSGD["arch"], float(row["epsilon"])).name)
            out.append({"scenario": scenario, "path": self.res(audit.path)})
        return out

    def audit_ldpfl_entries(self):
        """Per audited LDP-FL run: its audited scenario (client 0 holds the canaries), run folder and output."""
        out = []
        for row in audit_rows(self.config, "ldpfl"):
            scenario = audit_variant(self.config, row["scenario"], row["run"])
            run = Path(
                self.ldpfl_dir(
                    scenario,
                    row["run"],
                    self.LDPFL["fraction"],
                    self.ldpfl_dataset(row["scenario"])[1]["rounds"],
                )
            )
            audit = AuditRun("ldpfl", scenario, run.relative_to(self.res(f"ldpfl/{scenario}")).as_posix())
            out.append({"scenario": scenario, "run": str(run), "path": self.res(audit.path)})
        return out

    def audit_ldpdl_entries(self):
        """Per audited LDP-DL (with AQS) or PATE run: its audited scenario (owner 0 holds the canaries), the
        run's folder name and the audit's output."""
        out = []
        for row in audit_rows(self.config, "ldpdl"):
            scenario = audit_variant(self.config, row["scenario"], row["mechanism"])
            eps = float(row["epsilon"])
            run = (  # audits run on the scenario's parties: owner 0 is party 0, which holds the canaries
                self.pate_run(eps, "parties")
                if row["mechanism"] == "pate"
                else LdpdlRun(row["mechanism"], eps, self.LDPDL["per_query"], "parties", "aqs")
            )
            out.append({"scenario": scenario, "path": self.res(AuditRun("ldpdl", scenario, run.name).path)})
        return out

    def audit_ldpdl_inputs(self, wc):
        """The auditor reads the canary list, the run's final student and its claim: owner 0's composed
        ledger (LDP-DL's owners.csv of the last iteration) or the curator's guarantee (PATE).
        """
        d, run = self.res(f"ldpdl/{wc.scenario}/{wc.run}"), student_run(wc.run)
        if run.design != "parties" or getattr(run, "sampling", "aqs") != "aqs":
            raise ValueError(f"audit of {wc.run!r}: audits cover runs on the scenario's parties (with AQS) only")
        if isinstance(run, PateRun):
            last = self.distill_dir(wc.scenario, run.teachers, run.mechanism)
            claim = f"{last}/release/curated.guarantee.json"
        else:
            last = f"{d}/iter-{self.ldpdl_shape('aqs')[1]}"
            claim = f"{last}/owners.csv"
        return {
            "canaries": f"{self.partition_dir(wc.scenario)}/canaries.parquet",
            "model": f"{last}/student.pt",
            "claim": claim,
        }

    def audit_validation_paths(self):
        names = ["none"] + [f"rr-eps{float(e)!r}" for e in self.AUDIT["validation"]]
        return [self.res(AuditRun("validation", None, name).path) for name in names]

    def audit_distill_inputs(self, wc):
        """The auditor reads the canary list, the release and its guarantee, the votes of every record but
        the canaries (the base scenario's parties' exact answers), and the public queries and encoder (to
        place each canary as a party would)."""
        encoder, s, _ = self.rknn_teacher(wc.teacher)
        d = self.distill_dir(wc.scenario, wc.teacher, wc.mech)
        release = f"{d}/release/party-0" if self.is_local(wc.mech) else f"{d}/release/curated"
        base = self.distill_dir(self.public_side(wc.scenario), wc.teacher)
        parties = [0] if self.is_local(wc.mech) else self.party_ids(wc.scenario)
        return {
            "canaries": f"{self.partition_dir(wc.scenario)}/canaries.parquet",
            "known": [f"{base}/answers/party-{p}.npy" for p in parties],
            "release": f"{release}.json" if self.is_local(wc.mech) else f"{release}.npy",
            "guarantee": f"{release}.guarantee.json",
            "centers": f"{self.represent_dir(self.public_side(wc.scenario), encoder)}/s{s}/centers.npy",
            "model": self.encoder_models(self.public_side(wc.scenario), encoder),
        }

    def exports(self) -> dict:
        """The names the rules files read (common.smk puts them in the Snakefile's namespace): every public
        method and every upper-case constant of this design."""
        names = [n for n in dir(self) if not n.startswith("_") and n != "exports"]
        return {n: getattr(self, n) for n in names if callable(getattr(self, n)) or n.isupper()}
