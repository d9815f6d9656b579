"""The membership audits (docs/audit.md): per audited row of each method its audited scenario (the canaries
placed), the run it audits and the audit's output; the validation runs.  ``D.audit`` in the rules."""

from __future__ import annotations

from pathlib import Path

from ..config import audit_rows, audit_variant
from ..runs import AuditRun, DpsgdRun, FedmdRun, LdpdlRun, PateRun, RknnRun, student_run
from .part import Part


class AuditDesign(Part):
    """Every audit the config asks for, and its table and figure."""

    methods = ("audit",)

    def targets(self):
        return [self.d.res("audit.csv"), self.d.res("figures/audit.png")]

    def rknn_entries(self):
        """Per audited reverse k-NN row: its audited scenario, teacher, mechanism and the audit's output."""
        out = []
        for row in audit_rows(self.d.config, "rknn"):
            scenario = audit_variant(self.d.config, row["scenario"], row["mechanism"])
            teacher, mech = (
                RknnRun(row["encoder"], int(row["s"]), int(row["k"])).name,
                self.d.distill.mechanism_dir(row),
            )
            out.append(
                {
                    "scenario": scenario,
                    "teacher": teacher,
                    "mech": mech,
                    "path": self.d.res(AuditRun("distill", scenario, f"{teacher}/{mech}").path),
                }
            )
        return out

    def fedmd_entries(self):
        """Per audited FedMD row: its audited scenario, answer, run and the audit's output."""
        out = []
        for row in audit_rows(self.d.config, "fedmd"):
            scenario = audit_variant(self.d.config, row["scenario"], row["run"])
            audit = AuditRun("fedmd", scenario, f"{row['answer']}/{row['run']}")
            out.append(
                {"scenario": scenario, "answer": row["answer"], "run": row["run"], "path": self.d.res(audit.path)}
            )
        return out

    def fedmd_inputs(self, wc):
        """The auditor reads the canary list, the parties' final models and party 0's sample ledger."""
        inputs = {
            "canaries": f"{self.d.partition_dir(wc.scenario)}/canaries.parquet",
            "models": self.d.res(f"fedmd/{wc.scenario}/{wc.answer}/{wc.run}/models.pt"),
            "ledger": [],
        }
        run = FedmdRun.parse(wc.run)
        if run.kind == "nfdp":
            inputs["ledger"] = [f"{self.d.sample_dir(wc.scenario, *run.sample)}/party-0.ledger.json"]
        return inputs

    def dpsgd_entries(self):
        """Per audited DP-SGD run: its audited scenario (replace canaries), epsilon and the audit's output."""
        out = []
        for row in audit_rows(self.d.config, "dpsgd"):
            scenario = audit_variant(self.d.config, row["scenario"], "dpsgd")
            audit = AuditRun("dpsgd", scenario, DpsgdRun(self.d.DPSGD["arch"], float(row["epsilon"])).name)
            out.append({"scenario": scenario, "path": self.d.res(audit.path)})
        return out

    def ldpfl_entries(self):
        """Per audited LDP-FL run: its audited scenario (client 0 holds the canaries), run folder and output."""
        out = []
        for row in audit_rows(self.d.config, "ldpfl"):
            scenario = audit_variant(self.d.config, row["scenario"], row["run"])
            run = Path(
                self.d.ldpfl.folder(
                    scenario,
                    row["run"],
                    self.d.LDPFL["fraction"],
                    self.d.ldpfl.dataset(row["scenario"])[1]["rounds"],
                )
            )
            audit = AuditRun("ldpfl", scenario, run.relative_to(self.d.res(f"ldpfl/{scenario}")).as_posix())
            out.append({"scenario": scenario, "run": str(run), "path": self.d.res(audit.path)})
        return out

    def ldpdl_entries(self):
        """Per audited LDP-DL (with AQS) or PATE run: its audited scenario (owner 0 holds the canaries), the
        run's folder name and the audit's output."""
        out = []
        for row in audit_rows(self.d.config, "ldpdl"):
            scenario = audit_variant(self.d.config, row["scenario"], row["mechanism"])
            eps = float(row["epsilon"])
            run = (  # audits run on the scenario's parties: owner 0 is party 0, which holds the canaries
                self.d.ldpdl.pate_run(eps, "parties")
                if row["mechanism"] == "pate"
                else LdpdlRun(row["mechanism"], eps, self.d.LDPDL["per_query"], "parties", "aqs")
            )
            out.append({"scenario": scenario, "path": self.d.res(AuditRun("ldpdl", scenario, run.name).path)})
        return out

    def ldpdl_inputs(self, wc):
        """The auditor reads the canary list, the run's final student and its claim: owner 0's composed
        ledger (LDP-DL's owners.csv of the last iteration) or the curator's guarantee (PATE).
        """
        d, run = self.d.res(f"ldpdl/{wc.scenario}/{wc.run}"), student_run(wc.run)
        if run.design != "parties" or getattr(run, "sampling", "aqs") != "aqs":
            raise ValueError(f"audit of {wc.run!r}: audits cover runs on the scenario's parties (with AQS) only")
        if isinstance(run, PateRun):
            last = self.d.distill.folder(wc.scenario, run.teachers, run.mechanism)
            claim = f"{last}/release/curated.guarantee.json"
        else:
            last = f"{d}/iter-{self.d.ldpdl.shape('aqs')[1]}"
            claim = f"{last}/owners.csv"
        return {
            "canaries": f"{self.d.partition_dir(wc.scenario)}/canaries.parquet",
            "model": f"{last}/student.pt",
            "claim": claim,
        }

    def table_files(self):
        """Every audited release's row (results/audit.csv): the validation runs', then each method's."""
        kinds = (self.rknn_entries, self.fedmd_entries, self.dpsgd_entries, self.ldpfl_entries, self.ldpdl_entries)
        return self.validation_paths() + [e["path"] for kind in kinds for e in kind()]

    def validation_paths(self):
        names = ["none"] + [f"rr-eps{float(e)!r}" for e in self.d.AUDIT["validation"]]
        return [self.d.res(AuditRun("validation", None, name).path) for name in names]

    def distill_inputs(self, wc):
        """The auditor reads the canary list, the release and its guarantee, the votes of every record but
        the canaries (the base scenario's parties' exact answers), and the public queries and encoder (to
        place each canary as a party would)."""
        distill = self.d.distill
        encoder, s, _ = distill.rknn_teacher(wc.teacher)
        local, public = distill.is_local(wc.mech), distill.public_side(wc.scenario)
        d = distill.folder(wc.scenario, wc.teacher, wc.mech)
        release = f"{d}/release/party-0" if local else f"{d}/release/curated"
        base = distill.folder(public, wc.teacher)
        parties = [0] if local else self.d.party_ids(wc.scenario)
        return {
            "canaries": f"{self.d.partition_dir(wc.scenario)}/canaries.parquet",
            "known": [f"{base}/answers/party-{p}.npy" for p in parties],
            "release": f"{release}.json" if local else f"{release}.npy",
            "guarantee": f"{release}.guarantee.json",
            "centers": f"{distill.represent_dir(public, encoder)}/s{s}/centers.npy",
            "model": distill.encoder_models(public, encoder),
        }
