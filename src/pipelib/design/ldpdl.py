"""LDP-DL and PATE (paper 004): the owners' teachers and their encoder, the runs' folders and iterations,
Table 1's arms, Figures 4-6 and the rows on other methods' splits.  ``D.ldpdl`` in the rules."""

from __future__ import annotations

from pathlib import Path

from ..config import ldpdl_compare_scenarios, party_variant, replicate
from ..methods.ldpdl import TABLE_ARMS, teacher_model
from ..runs import LdpdlRun, PateRun, PateTeachers
from ..settings import LdpdlSettings
from .part import Part

LDPDL_TABLE_ARMS = tuple(TABLE_ARMS)  # paper 004 Table 1's result rows per entry


def teacher_settings(ldpdl: dict, private: str, design: str | None = None) -> dict:
    """The teachers' settings of a private dataset (``ldpdl``: the config section): its encoder and the ridge
    penalty; for PATE's own teachers (design ``S<n>``) the CNN they train from scratch (ldpdl.pate.scratch)."""
    if design is not None and design.startswith("S"):
        return {"scratch": ldpdl["pate"]["scratch"]}
    t = ldpdl["teacher"]
    encoder = t["by_dataset"].get(private, t["encoder"])
    return {"encoder": encoder, "ridge": encoder.get("ridge", t["ridge"])}


class LdpdlDesign(Part):
    """LDP-DL's runs (and PATE's, which paper 004 compares with them on the same student)."""

    methods, folders = ("ldpdl",), ("ldpdl",)

    def tables(self):
        return ["table_ldpdl"] if self.table_entries() else []

    def figures(self):
        return self.figure_names()

    def result_files(self):
        """Table 1's arms, Figures 4-6's runs and the rows on other methods' splits (compare.csv)."""
        files = [e[k] for e in self.table_entries() for k in LDPDL_TABLE_ARMS if k in e]
        return files + [e["path"] for e in self.figure_entries()] + self.compare_paths()

    def releases(self, result):
        return self.release_guarantees(result)

    def owner_design(self, owners=None):
        """The owners of LDP-DL runs: ``L<owners>`` (overlapping owners, ldpdl.owners) or ``parties``
        (the scenario's parties; ldpdl.owners = parties, compare and audit runs)."""
        o = self.d.LDPDL["owners"]
        if o == "parties":
            return "parties"
        return f"L{o['count'] if owners is None else owners}"

    def pate_run(self, eps, design=None):
        """The PATE run at ``eps`` over ``design``'s teachers (default ldpdl.pate.teachers), each voting on
        the S x T queries LDP-DL's runs make."""
        queries = self.d.LDPDL["queries_per_iteration"] * self.d.LDPDL["iterations"]
        return PateRun(float(eps), design or self.pate_design(), queries)

    def pate_design(self):
        """PATE's teachers: ``T<n>`` disjoint shards of the pool (ldpdl.pate.teachers) or ``parties``."""
        t = self.d.LDPDL["pate"]["teachers"]
        return "parties" if t == "parties" else f"T{t}"

    def folder(self, scenario, mech, eps, nq, qs, design):
        return self.d.res(f"ldpdl/{scenario}/{LdpdlRun(mech, eps, nq, design, qs)}")

    def shape(self, qs):
        """(queries per iteration, iterations) of a run (pipelib.settings.LdpdlSettings.shape)."""
        return LdpdlSettings.of(self.d.config).shape(qs)

    def result(self, scenario, mech, eps, nq, qs, design=None):
        """A run's result row: its last iteration's student."""
        d = self.folder(scenario, mech, eps, nq, qs, design or self.owner_design())
        return f"{d}/iter-{self.shape(qs)[1]}/result.json"

    def release_guarantees(self, result):
        """The release records behind a run's result row (every iteration up to the row's)."""
        run, last = Path(result).parent.parent, int(Path(result).parent.name.split("-")[1])
        return [f"{run}/iter-{t}/answers.guarantee.json" for t in range(1, last + 1)]

    def pate_result(self, scenario, eps, design=None):
        run = self.pate_run(eps, design)
        return f"{self.d.distill.folder(scenario, run.teachers, run.mechanism)}/result.json"

    def teachers_files(self, scenario, design):
        """The owners' teachers of a design (for the owners' and the curator's jobs only) and their summary."""
        d = self.d.res(f"ldpdl/{scenario}/teachers-{design}")
        return {"teachers": f"{d}/teachers.npz", "teachers_info": f"{d}/teachers.json"}

    def teacher_settings(self, scenario, design=None):
        """The teachers' settings for a scenario (:func:`teacher_settings`)."""
        return teacher_settings(self.d.LDPDL, self.d.SCENARIOS[scenario]["private"], design)

    def pate_teacher_settings(self, wc):
        """The settings of the teachers of a PATE job's ``teacher`` wildcard."""
        return self.teacher_settings(wc.scenario, PateTeachers.of(wc).design)

    def teacher_encoder_files(self, scenario, design=None):
        """The frozen encoder the teachers of ``scenario`` read (rule ldpdl_encoder), if not HOG; none for
        PATE's CNNs from scratch."""
        dataset = self.d.SCENARIOS[scenario]["private"]
        if "encoder" not in (s := self.teacher_settings(scenario, design)) or s["encoder"]["kind"] != "transfer":
            return {}
        return {"encoder": self.d.res(f"ldpdl/encoder-{dataset}/encoder.pt")}

    def teacher_encoder_settings(self, dataset):
        """The settings of the teachers' encoder of a private dataset (a ``transfer`` entry of by_dataset)."""
        return self.d.LDPDL["teacher"]["by_dataset"][dataset]

    def teacher_records(self, design):
        """Records per owner of an ``L<n>`` design (0: the design's shards say)."""
        return self.d.LDPDL["owners"]["records"] if design.startswith("L") else 0

    def run_dir(self, wc):
        return self.folder(wc.scenario, wc.ldmech, wc.eps, wc.nq, wc.qs, wc.design)

    def queries_of(self, wc, t):
        """The queries of iteration t: the plan's first draw, then each student's choice of the next."""
        d = self.run_dir(wc)
        return f"{d}/iter-1/queries.npy" if t == 1 else f"{d}/iter-{t - 1}/next.npy"

    def design_owners(self, scenario, design):
        """How many owners a design has."""
        return self.d.SCENARIOS[scenario]["parties"] if design == "parties" else int(design[1:])

    def table_entries(self):
        """Paper 004 Table 1: per dataset and epsilon, LDP-DL (the table's mechanism, AQS) and PATE in two
        arms: ``pate`` on LDP-DL's teacher family (ldpdl.pate.teachers disjoint shards), ``pate_own`` on
        PATE's own teachers (CNNs from scratch on the same shards; only with ldpdl.pate.scratch); ``ceiling``:
        the dataset's student on true labels (rule ldpdl_ceiling, the noise-free reference).
        ``teachers``: each arm's teacher model in words; ``repeats``: each arm's results on the dataset's
        other seeds (ldpdl.table.seeds, for the arms of ldpdl.table.seed_arms; the scenario's repeats
        ``<scenario>-s<i>``)."""
        t, own = self.d.LDPDL["table"], self.pate_own_design()

        def arms(sc, e):
            return {
                "ldpdl": self.result(sc, t["mechanism"], e, self.d.LDPDL["per_query"], "aqs"),
                "pate": self.pate_result(sc, e),
                **({"pate_own": self.pate_result(sc, e, own)} if own else {}),
            }

        def repeats(label, sc, e):
            runs = [arms(replicate(sc, i), e) for i in range(1, t.get("seeds", {}).get(label, 1))]
            chosen = [arm for arm in (runs[0] if runs else {}) if arm in t.get("seed_arms", LDPDL_TABLE_ARMS)]
            return {"repeats": {arm: [r[arm] for r in runs] for arm in chosen}} if chosen else {}

        return [
            {
                "dataset": label,
                "epsilon": float(e),
                **arms(sc, e),
                **repeats(label, sc, e),
                "ceiling": self.d.res(f"ldpdl/{sc}/ceiling/result.json"),
                "teachers": {
                    "ldpdl": self.teacher_model(sc),
                    "pate": self.teacher_model(sc),
                    **({"pate_own": self.teacher_model(sc, own)} if own else {}),
                },
            }
            for label, sc in t["datasets"].items()
            if sc in self.d.SCENARIOS
            for e in t["epsilon"]
        ]

    def pate_own_design(self):
        """``S<n>``: PATE's own teachers on the shards of ``T<n>`` (ldpdl.pate.scratch set), else None."""
        p = self.d.LDPDL["pate"]
        return f"S{p['teachers']}" if p.get("scratch") and p["teachers"] != "parties" else None

    def teacher_model(self, scenario, design=None):
        """A scenario's teachers (of ``design``) in words, for the tables' ``teacher_model`` column."""
        return teacher_model(self.teacher_settings(scenario, design))

    def owners_sweep_result(self, sc, mech, eps, qs, n):
        """Figures 4-6 (c): the run with L = n owners (overlapping owners), or on the scenario dealt to n
        parties (ldpdl.owners = parties)."""
        if self.d.LDPDL["owners"] == "parties":
            return self.result(party_variant(self.d.config, sc, n), mech, eps, self.d.LDPDL["per_query"], qs, "parties")
        return self.result(sc, mech, eps, self.d.LDPDL["per_query"], qs, self.owner_design(n))

    def table_files(self):
        """Table 1's result files: each entry's arms, its noise-free ceiling and its arms' repeats."""
        entries = self.table_entries()
        repeats = [p for e in entries for paths in e.get("repeats", {}).values() for p in paths]
        return [e[k] for e in entries for k in (*LDPDL_TABLE_ARMS, "ceiling") if k in e] + repeats

    def figure_entries_of(self, ldset):
        """The runs of one dataset's Figures 4-6 (``ldset``: the dataset's slug)."""
        return [e for e in self.figure_entries() if self.d.slug(e["dataset"]) == ldset]

    def figure_entries(self):
        """Figures 4-6: accuracy against epsilon, N_Q and L; every mechanism with and without AQS."""
        f = self.d.LDPDL["figures"]
        out = []
        for label, sc in f["datasets"].items():
            if sc not in self.d.SCENARIOS:
                continue
            for mech in f["mechanisms"]:
                for qs in ("aqs", "random"):
                    common = {"dataset": label, "mechanism": mech, "aqs": qs == "aqs"}
                    out += [
                        {
                            **common,
                            "sweep": "epsilon",
                            "x": float(e),
                            "path": self.result(sc, mech, e, self.d.LDPDL["per_query"], qs),
                        }
                        for e in f["epsilon"]
                    ]
                    out += [
                        {
                            **common,
                            "sweep": "per_query",
                            "x": n,
                            "path": self.result(sc, mech, f["at_epsilon"], n, qs),
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

    def compare_paths(self):
        """LDP-DL (the table's mechanism, AQS) and PATE on other methods' splits: compare.csv's rows only."""
        c = self.d.LDPDL["compare"]
        return [
            path
            for sc in ldpdl_compare_scenarios(self.d.config)
            for e in c["epsilon"]
            for path in (
                self.result(sc, self.d.LDPDL["table"]["mechanism"], e, c["per_query"], "aqs", "parties"),
                self.pate_result(sc, e, "parties"),
            )
        ]

    def figure_names(self):
        return [f"p004_{self.d.slug(label)}" for label in dict.fromkeys(e["dataset"] for e in self.figure_entries())]
