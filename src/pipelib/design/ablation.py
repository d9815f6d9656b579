"""FedMD's two ablations, each a page of its own command (not in the default target: hours of CPU at the
paper's size): the distillation budget (paper002.budget) and the loop at small k (paper002.ablation), with
the pooled ceilings.  ``D.ablation`` in the rules."""

from __future__ import annotations

from ..runs import BudgetPoint, FedmdRun
from .part import Part


class AblationDesign(Part):
    """FedMD rows at other budgets and under variants of the loop, on Table 2's samples and models."""

    methods, folders = ("fedmd", "centralized"), ("fedmd_budget", "fedmd_ablation", "centralized_pooled")

    def budget_result(self, scenario, run, rounds, queries, epochs):
        """A FedMD row at a distillation budget and pre-training: the Table 2 run where they are the preset's."""
        if (rounds, queries, epochs) == (
            self.d.FEDMD["rounds"],
            self.d.FEDMD["public_per_round"],
            self.d.FEDMD["pretrain"]["epochs"],
        ):
            return self.d.fedmd.result(scenario, self.d.FEDMD["answer"], run)
        point = BudgetPoint(rounds, queries, epochs).name
        return self.d.res(f"fedmd_budget/{scenario}/{self.d.FEDMD['answer']}/{point}/{run}/result.json")

    def budget_entries(self):
        """FedMD-NP and FedMD-NFDP at paper002.budget.k on every table2 dataset, at every budget point."""
        k = self.d.P002["budget"]["k"]
        return [
            {
                "dataset": label,
                "run": run,
                "rounds": rounds,
                "public_per_round": queries,
                "pretrain_epochs": epochs,
                "path": self.budget_result(spec["scenario"], run, rounds, queries, epochs),
            }
            for label, spec in self.d.TABLE2.items()
            for rounds, queries, epochs in self.d.P002["budget"]["points"]
            for run in ("np", self.d.fedmd.nfdp_run(spec["sampling"], k))
        ]

    def inputs(self, wildcards):
        """A loop-ablation row reads what its Table 2 row reads, with models pre-trained at the ablation's
        epochs, and the parties' samples drawn by the variant's ``sampling`` where it sets one."""
        inputs = self.d.fedmd.inputs(wildcards, self.d.P002["ablation"]["budget"][2])
        sampling = self.variant(wildcards.variant).get("sampling")
        run = FedmdRun.parse(wildcards.run)
        if sampling and run.kind == "nfdp":
            sample = self.d.sample_dir(wildcards.scenario, sampling, run.k)
            inputs["parties"] = [f"{sample}/party-{i}.parquet" for i in self.d.party_ids(wildcards.scenario)]
            inputs["ledger"] = f"{sample}/ledger.csv"
        return inputs

    def variant(self, name):
        """paper002.ablation's variant ``name`` (its entry: name, settings, scope)."""
        return next(v for v in self.d.P002["ablation"]["variants"] if v["name"] == name)

    def pooled_result(self, scenario, sampling, k, pretrain_epochs, epochs, arch):
        """The pooled ceiling of an NFDP row: ``arch`` trained on the union of its parties' samples."""
        return self.d.res(
            f"centralized_pooled/{scenario}/{sampling}-k{k}/pe{pretrain_epochs}-e{epochs}/{arch}/result.json"
        )

    def entries(self):
        """paper002.ablation: every variant of FedMD-NFDP at each k on every table2 dataset (a variant's own ``k``
        and ``datasets`` narrow them; its ``settings``: the keys it sets), and the pooled ceilings (Centralized on
        the union of the parties' samples) of each (dataset, k, draw) a variant runs, one entry per architecture."""
        a = self.d.P002["ablation"]
        entries = []
        for label, spec in self.d.TABLE2.items():
            scenario = spec["scenario"]
            for k in a["k"]:
                run, paper_k = self.d.fedmd.nfdp_run(spec["sampling"], k), a.get("paper_k", {}).get(k, k)
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
                        "path": self.d.res(f"fedmd_ablation/{scenario}/{v['name']}/{run}/result.json"),
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
                    for arch in sorted(set(self.d.fedmd.party_archs(scenario)))
                ]
        return entries
