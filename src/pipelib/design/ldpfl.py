"""LDP-FL (paper 001): the runs of Table 1 and Figures 3-5, and the rows on other methods' splits.
``D.ldpfl`` in the rules."""

from __future__ import annotations

from pathlib import Path

from ..config import ldpfl_compare_runs, party_variant
from ..runs import LdpflRun
from ..settings import ldpfl_dataset as ldpfl_dataset_of
from .part import Part

# Paper 001's figure name -> the entries it draws on (the first also names its rounds tables)
FIGURE_P001 = {
    "clients": ("clients",),  # Figure 3
    "fraction_rounds": ("fraction",),  # Figure 4
    "epsilon": ("epsilon", "radius"),  # Figure 5 (a)-(d)
}


class LdpflDesign(Part):
    """LDP-FL's runs: one folder per (scenario, run, fraction of clients, rounds)."""

    methods, folders = ("ldpfl",), ("ldpfl",)
    FIGURE_P001 = FIGURE_P001

    def tables(self):
        return ["table_ldpfl"] if self.paths("table") else []

    def figures(self):
        kinds = {e["artifact"] for e in self.entries()}
        return [f"p001_{name}" for name, arts in FIGURE_P001.items() if kinds & set(arts)]

    def result_files(self):
        """Every run's result row but Table 1's clipped noise-free references (a diagnostic of the fixed box,
        not a method's result: compare.csv and its pages leave them out)."""
        boxes = {e["path"] for e in self.entries() if e.get("range") == "box"}
        return [p for p in self.paths() if p not in boxes] + self.compare_paths()

    def releases(self, result):
        """Every client's per-round records of the run."""
        return [f"{Path(result).parent}/releases.json"]

    def folder(self, scenario, run, fraction, rounds):
        return self.d.res(f"ldpfl/{scenario}/{run}/f{float(fraction)!r}-m{int(rounds)}")

    def dataset(self, scenario):
        """The ldpfl.datasets entry of a scenario or of one of its variants (pipelib.config)."""
        return ldpfl_dataset_of(self.d.config, scenario)

    def entries(self):
        """Every LDP-FL run the config asks for: Table 1 (noise-free, noise-free clipped to the fixed box, and
        fixed vs adaptive range at each epsilon), Figure 3 (clients), Figure 4 (fraction of clients; rounds
        come from the runs' histories), Figure 5 (epsilon; radius of a fixed range)."""
        out = []
        for label, d in self.d.LDPFL["datasets"].items():
            sc = d["scenario"]
            if sc not in self.d.SCENARIOS:
                continue
            fixed = tuple(d["fixed_range"])
            shown = "adaptive" if d["figure_range"] == "adaptive" else fixed
            at = d["figure_epsilon"]

            def add(artifact, eps, radius, scenario=sc, fraction=self.d.LDPFL["fraction"], d=d, label=label, **extra):
                run = LdpflRun(eps, radius).name
                path = f"{self.folder(scenario, run, fraction, d['rounds'])}/result.json"
                out.append({"artifact": artifact, "dataset": label, "run": run, "path": path} | extra)

            add("table", None, None, epsilon=None, range="none")
            add("table", None, fixed, epsilon=None, range="box")  # noise-free, clipped to the fixed box
            for eps in self.d.LDPFL["table_epsilon"]:
                add("table", eps, fixed, epsilon=float(eps), range="fixed")
                add("table", eps, "adaptive", epsilon=float(eps), range="adaptive")
            for n in d["clients"]:
                variant = party_variant(self.d.config, sc, n)
                add("clients", at, shown, scenario=variant, x=n, private=True)
                add("clients", None, None, scenario=variant, x=n, private=False)
            for fr in self.d.LDPFL["fractions"]:
                add("fraction", at, shown, fraction=fr, x=float(fr), private=True)
            for eps in d["epsilons"]:
                add("epsilon", eps, shown, x=float(eps), private=True)
            if self.d.LDPFL["radius"]["dataset"] == label:
                for r in self.d.LDPFL["radius"]["r"]:
                    add(
                        "radius",
                        self.d.LDPFL["radius"]["epsilon"],
                        (0.0, r),
                        x=float(r),
                        private=True,
                    )
        return out

    def compare_paths(self):
        """LDP-FL on other methods' splits (noise-free and adaptive range): compare.csv's rows only."""
        fraction = self.d.LDPFL["fraction"]
        runs = [
            (sc, LdpflRun(eps, None if eps is None else "adaptive").name)
            for sc, eps in ldpfl_compare_runs(self.d.config)
        ]
        return [f"{self.folder(sc, run, fraction, self.dataset(sc)[1]['rounds'])}/result.json" for sc, run in runs]

    def paths(self, artifact=None):
        entries = [e for e in self.entries() if artifact in (None, e["artifact"])]
        return list(dict.fromkeys(e["path"] for e in entries))

    def p001_paths(self, name):
        """The result rows a paper-001 figure draws on."""
        return list(dict.fromkeys(p for a in FIGURE_P001[name] for p in self.paths(a)))

    def p001_entries(self, name):
        """The entries a paper-001 figure draws."""
        return [e for e in self.entries() if e["artifact"] in FIGURE_P001[name]]
