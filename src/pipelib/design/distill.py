"""The distillation stage (pipelib.methods.distill): the reverse k-NN teachers of paper 003 (their encoders,
the parties' answers, the curator's or the parties' releases, the server's labels and student, Table 1 and
Figure 2), and the plumbing PATE's teachers share with them.  ``D.distill`` in the rules."""

from __future__ import annotations

from pathlib import Path

from .. import vocab
from ..config import encoder_chain, kept
from ..config import encoder_settings as resolved_encoder
from ..runs import PateTeachers, RknnRun, teacher_run
from .part import Part


class DistillDesign(Part):
    """Reverse k-NN and PATE runs through the shared distillation stage."""

    methods, folders = ("distill", "rknn", "pate"), ("distill",)

    def __init__(self, design):
        super().__init__(design)
        # per teacher kind: what its answering job, the curator, the server's labeling and its student read
        # (beyond the rules' own inputs), and the config section of its student and curator
        self.TEACHERS = {
            "rknn": {
                "answers": self.rknn_party_inputs,
                "curate": self.rknn_curate_inputs,
                "label": self.rknn_label_inputs,
                "student": lambda wc: {},
                "settings": design.RKNN,
            },
            "pate": {
                "curate": self.pate_curate_inputs,
                "label": design.public_inputs,
                "student": self.pate_student_inputs,
                "settings": design.PATE,
            },
        }

    def tables(self):
        return ["table_rknn"]

    def figures(self):
        """Paper 003's figures this run selection has rows for."""
        has = {
            "p003_queries_and_neighbours": bool(self.p003_sweep_entries()),
            "p003_local_dp": bool(self.p003_local_entries()),
        }
        return [name for name, ok in has.items() if ok]

    def result_files(self):
        """Table 1's rows, the rows on other methods' splits (compare.csv) and Figure 2's."""
        files = [f"{d}/result.json" for part in ("table", "compare") for _, d in self.rknn_rows(part)]
        return files + [e["path"] for e in self.p003_sweep_entries() + self.p003_local_entries()]

    def releases(self, result):
        """The parties' local releases or the curator's sum (PATE's labels among them): their guarantees."""
        d = Path(result).parent
        scenario, mech = d.relative_to(self.d.RESULTS).parts[1], d.name
        names = (
            [f"release/party-{i}" for i in self.d.party_ids(scenario)] if self.is_local(mech) else ["release/curated"]
        )
        return [f"{d}/{n}.guarantee.json" for n in names]

    def represent_dir(self, scenario, encoder):
        return self.d.res(f"represent/{scenario}/{encoder}")

    def public_side(self, scenario):
        """Where a scenario's public-data stages (encoders, public embeddings, queries) live: an audited
        variant shares its base scenario's, since its public pool is the same (docs/audit.md).
        """
        return self.d.SCENARIOS[scenario].get("audit_of", scenario)

    def encoder_models(self, scenario, encoder):
        """The fitted models an encoder's embeddings need: its chain's (a UMAP encoder's input first, then
        its own); HOG has none."""
        chain = encoder_chain(self.d.RKNN["encoders"], encoder)
        return [
            f"{self.represent_dir(scenario, e)}/encoder.pt"
            for e in chain
            if self.d.RKNN["encoders"][e]["kind"] != "hog"
        ]

    def encoder_model(self, wildcards):
        """The fitted models embedding with ``wildcards.encoder`` reads."""
        return self.encoder_models(self.public_side(wildcards.scenario), wildcards.encoder)

    def encoder_base_models(self, wildcards):
        """The fitted models of the encoder's input (a UMAP encoder reduces its input's embeddings)."""
        enc = self.d.RKNN["encoders"][wildcards.encoder]
        return self.encoder_models(wildcards.scenario, enc["input"]) if "input" in enc else []

    def encoder_settings(self, wildcards):
        return resolved_encoder(self.d.RKNN["encoders"], wildcards.encoder)

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
        d = self.folder(wc.scenario, wc.teacher)
        return {"answers": [f"{d}/answers/party-{i}.npy" for i in self.d.party_ids(wc.scenario)]}

    def pate_votes_inputs(self, wc):
        """PATE's teachers' job reads the teachers (rule ldpdl_teachers) and the public pool."""
        return {
            **self.d.ldpdl.teachers_files(wc.scenario, PateTeachers.of(wc).design),
            **self.d.public_inputs(wc),
            **self.d.ldpdl.teacher_encoder_files(wc.scenario, PateTeachers.of(wc).design),
        }

    def pate_curate_inputs(self, wc):
        """PATE's curator reads the teachers' votes and their summary (the pool's size, the teachers)."""
        teachers = self.d.ldpdl.teachers_files(wc.scenario, PateTeachers.of(wc).design)
        return {
            "answers": [f"{self.folder(wc.scenario, wc.teacher)}/answers/teachers.npy"],
            "teachers_info": teachers["teachers_info"],
        }

    def pate_student_inputs(self, wc):
        """PATE's student reads the curator's release record (sigma, the teachers, the pool's size)."""
        return {"guarantee": f"{self.folder(wc.scenario, wc.teacher, wc.mech)}/release/curated.guarantee.json"}

    def teacher_kind(self, wc):
        """The TEACHERS entry of a distillation job's ``teacher`` wildcard."""
        return self.TEACHERS[teacher_run(wc.teacher).kind]

    def folder(self, scenario, teacher, mech=None):
        d = self.d.res(f"distill/{scenario}/{teacher}")
        return d if mech is None else f"{d}/{mech}"

    def mechanism_dir(self, row):
        return "none" if row["mechanism"] == "none" else f"{row['mechanism']}-eps{float(row['epsilon'])!r}"

    def rknn_rows(self, part="table"):
        """(config row, result dir) of every row of results/table_rknn.csv (``part`` compare: of the rows
        on other methods' splits that run.scenarios keeps, for compare.csv only)."""
        rows = self.d.RKNN[part]
        if part == "compare":
            running = kept(self.d.config, [row["scenario"] for row in rows])
            rows = [row for row in rows if row["scenario"] in running]
        return [
            (
                row,
                self.folder(
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
        d = self.folder(wc.scenario, wc.teacher, wc.mech)
        if self.is_local(wc.mech):
            names = [f"{d}/release/party-{i}" for i in self.d.party_ids(wc.scenario)]
        else:
            names = [f"{d}/release/curated"]
        ext = ".json" if self.is_local(wc.mech) else ".npy"
        return {
            "releases": [f"{n}{ext}" for n in names],
            "guarantees": [f"{n}.guarantee.json" for n in names],
        }

    def rknn_result(self, scenario, encoder, s, k, mech):
        return f"{self.folder(scenario, RknnRun(encoder, int(s), int(k)).name, mech)}/result.json"

    def p003_sweep_entries(self):
        """Paper 003 Figure 2(a)-(c): s at k = 1, and k at s = at_s; central Laplace at the row's epsilon."""
        entries = []
        for label, v in self.d.P003["figure2abc"].items():
            if v["scenario"] not in self.d.SCENARIOS:
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
        d = self.d.P003["figure2d"]
        return [
            {
                "dataset": label,
                "path": self.rknn_result(v["scenario"], v["encoder"], 10, 1, f"{m}-eps{float(e)!r}"),
            }
            for label, v in d["datasets"].items()
            if v["scenario"] in self.d.SCENARIOS
            for m in d["mechanisms"]
            for e in d["epsilon"]
        ]
