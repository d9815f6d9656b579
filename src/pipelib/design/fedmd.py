"""FedMD (paper 002): the NFDP samples, the pre-trained models, Table 2's rows and their centralized
baselines, and the rows of Tables 3-5 and Figure 2(d) with their repeats.  ``D.fedmd`` in the rules."""

from __future__ import annotations

from pathlib import Path

from .. import vocab
from ..config import fedmd_compare_runs, party_variant, replicate
from ..data import ingest as raw
from ..runs import FedmdRun
from ..settings import fedmd_params, party_archs
from .part import DesignError, Part


class FedmdDesign(Part):
    """FedMD's runs: NP, NFDP and LDP rows on the table2 scenarios, their baselines and paper 002's tables."""

    methods, folders = ("fedmd", "centralized"), ("fedmd", "centralized")

    def tables(self):
        return ["table2", "table3", "table4", "table5"]

    def figures(self):
        """Paper 002's figures this run selection has rows for (the closed forms always)."""
        rounds = any(self.d.P002["k"] in spec["k"] for spec in self.d.TABLE2.values())
        has = {"privacy_vs_parties": True, "accuracy_vs_parties": bool(self.figure2d_entries()), "rounds": rounds}
        return [f"p002_{name}" for name, ok in {**has, "privacy_vs_k": True}.items() if ok]

    def result_files(self):
        """Table 2's rows and their centralized baselines, FedMD on other methods' splits (compare.csv), and
        the rows of Tables 3-5 and Figure 2(d)."""
        files = [f"{self.table2_dir(label, run)}/result.json" for label, run in self.table2_rows()]
        files += [self.result(sc, self.d.FEDMD["answer"], run) for sc, run in fedmd_compare_runs(self.d.config)]
        files += [f"{d}/result.json" for _, _, d in self.centralized_runs()]
        return files + [e["path"] for e in self.paper_entries()]

    def ledgers(self):
        """The ledger of every NFDP sample: the scenarios' and those of paper 002's tables' repeats."""
        samples = self.nfdp_samples() + self.repeat_samples()
        return [f"{self.d.sample_dir(*key)}/ledger.csv" for key in samples]

    def releases(self, result):
        """An NFDP row's sample ledger; an LDP row's per-party answer records (a baseline has none)."""
        parts = Path(result).parent.relative_to(self.d.RESULTS).parts
        if parts[0] != "fedmd":
            return []
        run = FedmdRun.parse(parts[3])
        if run.kind == "nfdp":
            return [f"{self.d.sample_dir(parts[1], *run.sample)}/ledger.csv"]
        return [f"{Path(result).parent}/releases.json"] if run.kind == "ldp" else []

    def paper_entries(self):
        """Every row of paper 002's Tables 3-5 and Figure 2(d)."""
        return self.table3_entries() + self.table4_entries() + self.table5_entries() + self.figure2d_entries()

    def nfdp_samples(self):
        """(scenario, sampling, k) for every NFDP sample the config asks for."""
        return [
            (name, sampling, k)
            for name, sc in self.d.SCENARIOS.items()
            if "nfdp" in sc
            for sampling in sc["nfdp"]["sampling"]
            for k in sc["nfdp"]["k"]
        ]

    def n_outputs(self, scenario):
        """Public classes + the private task's classes (FedMD's shared output layer)."""
        sc = self.d.SCENARIOS[scenario]
        return raw.dataset(sc["public"]).classes + len(self.d.config["tasks"][sc["task"]]["classes"])

    def party_archs(self, scenario):
        return party_archs(self.d.FEDMD["architectures"], self.d.SCENARIOS[scenario]["parties"])

    def pretrained(self, scenario, arch, epochs=None):
        """The shared initialization of ``arch`` for ``scenario``: trained on the public dataset's train
        split, or, where the public and private data are one dataset (papers 003 and 004's splits: the
        other rows of the public pool are private), on the scenario's public pool alone (pretrain_pool).
        ``epochs`` other than the preset's (FedMD's budget ablation): pretrain/<public>/e<epochs>/.
        """
        sc = self.d.SCENARIOS[scenario]
        epochs = None if epochs is None else int(epochs)  # a path's wildcard is text
        if sc["public"] == sc["private"]:
            if epochs not in (None, self.d.FEDMD["pretrain"]["epochs"]):
                raise DesignError(
                    f"paper002.budget: pre-training epochs {epochs} on scenario {scenario!r}, whose public "
                    "pool is a slice of its private dataset, is not supported (only the preset's "
                    f"fedmd.pretrain.epochs = {self.d.FEDMD['pretrain']['epochs']})"
                )
            return self.d.res(f"pretrain_pool/{scenario}/{arch}-c{self.n_outputs(scenario)}.pt")
        variant = "" if epochs in (None, self.d.FEDMD["pretrain"]["epochs"]) else f"e{epochs}/"
        return self.d.res(f"pretrain/{sc['public']}/{variant}{arch}-c{self.n_outputs(scenario)}.pt")

    def inputs(self, wildcards, epochs=None):
        """Party i's private input is its NFDP sample (nfdp) or all its records (np, ldp); nothing else.
        ``epochs``: the pre-trained models' (default: the path's ``pe``, else the preset's)."""
        scenario, run = wildcards.scenario, FedmdRun.parse(wildcards.run)
        epochs = dict(wildcards.items()).get("pe") if epochs is None else epochs
        if run.kind == "nfdp":
            parties = [
                f"{self.d.sample_dir(scenario, *run.sample)}/party-{i}.parquet" for i in self.d.party_ids(scenario)
            ]
        else:
            parties = [self.d.party_table(scenario, i) for i in self.d.party_ids(scenario)]
        inputs = {
            "parties": parties,
            "models": [self.pretrained(scenario, arch, epochs) for arch in sorted(set(self.party_archs(scenario)))],
            **self.d.public_inputs(wildcards),
            "test": f"{self.d.partition_dir(scenario)}/test.parquet",
        }
        if run.sample:  # nfdp: its own ledger; ldp: the ledger of the NFDP row it is calibrated to
            inputs["ledger"] = f"{self.d.sample_dir(scenario, *run.sample)}/ledger.csv"
        return inputs

    def settings(self, wildcards):
        """FedMD's settings of a job from its path, as its rule's params (pipelib.settings.fedmd_params: its
        answer type, budget point or loop-ablation variant; the job parses them into FedmdSettings)."""
        return fedmd_params(self.d.config, dict(wildcards.items()))

    def table2_rows(self):
        """(dataset label, run) of every FedMD row of results/table2.csv."""
        rows = []
        for label, spec in self.d.TABLE2.items():
            rows.append((label, FedmdRun("np").name))
            rows += [(label, FedmdRun.nfdp(spec["sampling"], k).name) for k in spec["k"]]
            rows += [(label, FedmdRun.ldp(spec["sampling"], k).name) for k in spec.get("ldp_k", [])]
        return rows

    def table2_dir(self, label, run, repeat=0):
        scenario = replicate(self.d.TABLE2[label]["scenario"], repeat)
        return self.d.res(f"fedmd/{scenario}/{self.d.FEDMD['answer']}/{run}")

    def table2_repeats(self):
        """(dataset label, run, repeat) of every repeat (table2.<label>.seeds > 1) of a Table 2 NP or NFDP row."""
        return [
            (label, run, i)
            for label, run in self.table2_rows()
            if FedmdRun.parse(run).kind != "ldp"
            for i in range(1, self.d.TABLE2[label].get("seeds", 1))
        ]

    def centralized_runs(self):
        """(dataset label, arch, result dir) of every centralized baseline Table 2 needs."""
        return [
            (label, arch, self.d.res(f"centralized/{spec['scenario']}/{arch}"))
            for label, spec in self.d.TABLE2.items()
            for arch in sorted(set(self.party_archs(spec["scenario"])))
        ]

    def repeat_samples(self):
        """(scenario, sampling, k) of the NFDP samples of paper 002's tables' repeats (paper002.seeds)."""
        out = []
        for e in self.table3_entries() + self.table4_entries() + self.table5_entries() + self.figure2d_entries():
            for path in e["repeats"]:
                _, scenario, _, name = Path(path).parent.relative_to(self.d.RESULTS).parts
                run = FedmdRun.parse(name)
                out += [(scenario, *run.sample)] if run.kind == "nfdp" else []
        return out

    def result(self, scenario, answer, run):
        return self.d.res(f"fedmd/{scenario}/{answer}/{run}/result.json")

    def nfdp_run(self, sampling, k):
        return FedmdRun.nfdp(sampling, k).name

    def paper002_runs(self, scenario, answer, run):
        """A row of paper 002's Tables 3-5 or Figure 2(d): its result file (``path``) and its repeats' on the
        scenario's other seeds (``repeats``, paper002.seeds)."""
        return {
            "path": self.result(scenario, answer, run),
            "repeats": [self.result(replicate(scenario, i), answer, run) for i in range(1, self.d.P002["seeds"])],
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
                    party_variant(self.d.config, spec["scenario"], n),
                    answer,
                    self.nfdp_run(spec["sampling"], self.d.P002["k"]),
                ),
            }
            for label, spec in self.d.TABLE2.items()
            for answer in self.d.P002["table3"]["answers"]
            for n in self.d.P002["table3"]["parties"]
        ]

    def table4_entries(self):
        """IID (the table2 scenario) against non-IID, at paper002.k."""
        answer, run = self.d.P002["table4"]["answer"], lambda spec: self.nfdp_run(spec["sampling"], self.d.P002["k"])
        entries = [
            {
                "dataset": label,
                "setting": "IID",
                **self.paper002_runs(spec["scenario"], answer, run(spec)),
            }
            for label, spec in self.d.TABLE2.items()
        ]
        entries += [
            {
                "dataset": label,
                "setting": "non-IID",
                **self.paper002_runs(scenario, answer, run(self.d.TABLE2[label])),
            }
            for label, scenario in self.d.P002["table4"]["noniid"].items()
            if label in self.d.TABLE2 and scenario in self.d.SCENARIOS
        ]
        return entries

    def table5_entries(self):
        """Sampling with against without replacement, at the k of each dataset label."""
        answer = self.d.P002["table5"]["answer"]
        return [
            {
                "dataset": label,
                "sampling": sampling,
                "k": k,
                **self.paper002_runs(self.d.TABLE2[label]["scenario"], answer, self.nfdp_run(sampling, k)),
            }
            for label, k in self.d.P002["table5"]["k"].items()
            if label in self.d.TABLE2
            for sampling in vocab.SAMPLINGS
        ]

    def figure2d_entries(self):
        """Accuracy against the number of parties, at paper002.k."""
        answer = self.d.P002["figure2d"]["answer"]
        return [
            {
                "dataset": label,
                **self.paper002_runs(
                    party_variant(self.d.config, spec["scenario"], n),
                    answer,
                    self.nfdp_run(spec["sampling"], self.d.P002["k"]),
                ),
            }
            for label, spec in self.d.TABLE2.items()
            for n in self.d.P002["figure2d"]["parties"]
        ]
