"""DP-SGD, the central baseline: one run per scenario of dpsgd.scenarios and epsilon.  ``D.dpsgd`` in the
rules."""

from __future__ import annotations

from pathlib import Path

from ..config import dpsgd_pretrained, dpsgd_scenarios
from ..runs import DpsgdRun
from .part import Part


class DpsgdDesign(Part):
    """DP-SGD's runs (their result rows go to compare.csv only)."""

    methods, folders = ("dpsgd",), ("dpsgd",)

    def result_files(self):
        return [f"{d}/result.json" for d in self.dirs()]

    def releases(self, result):
        """The accountant's record of the run's noisy steps."""
        return [f"{Path(result).parent}/releases.json"]

    def dirs(self):
        """The result folder of every DP-SGD run: per scenario of dpsgd.scenarios that runs, per epsilon."""
        return [
            self.d.res(f"dpsgd/{scenario}/{DpsgdRun(self.d.DPSGD['arch'], eps).name}")
            for scenario in dpsgd_scenarios(self.d.config)
            for eps in self.d.DPSGD["epsilon"]
        ]

    def inputs(self, wildcards):
        """Every party's records (pooled by the job) and the test set; the public pre-trained model where the
        scenario's public data is another dataset (else DP-SGD starts from scratch)."""
        scenario = wildcards.scenario
        out = {
            "parties": [self.d.party_table(scenario, i) for i in self.d.party_ids(scenario)],
            "test": self.d.res(f"partitions/{scenario}/test.parquet"),
        }
        if dpsgd_pretrained(self.d.config, scenario):
            out["model"] = self.d.fedmd.pretrained(scenario, wildcards.arch)
        return out
