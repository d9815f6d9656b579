"""Every reproduction page, table and figure, registered once.

A page (:data:`PAGES`): the tables it reads, the figures it shows, the commands it prints and the function
of :mod:`pipelib.report.pages` that writes it.  A table or figure (:data:`VIEWS`): the rule that makes it,
its file, its inputs and arguments (functions of the design and the job's wildcards), the function that
writes it and its caption in ``snakemake --report``.  The design (inputs, the default target), the rules
(workflow/rules/report.smk defines one rule per entry) and the scripts (reproduction_page.py, view.py) all
read these, so a new page, table or figure is one entry here (or a method module's ``register_*`` call) and
its function.  This module imports no report module: a table's or figure's code digest covers view.py, this
registry and its own entry's module (``View.module``) with what that imports, so editing the figures module
re-runs the figures only, and editing any entry here re-runs every table and figure (seconds)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageInputs:
    """What a page function gets: each table's path (None where the config makes no such table), its
    figures (name -> path beside the page), their data files (name -> CSV), the commands a page prints
    (target name -> command), the preset and the audit's guess fractions."""

    tables: dict
    figures: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    commands: dict = field(default_factory=dict)
    preset: str = ""
    audit_fractions: tuple = ()


@dataclass(frozen=True)
class Page:
    """One page: ``tables`` it reads (``<results>/<name>.csv``; those in ``optional`` exist only where the
    config asks for them), ``figures`` it shows (``prefix:<p>``: its paper's figures named ``<p>...``;
    ``compare``: one per compared scenario and the audit's; ``budget``: FedMD's budget figure), ``commands``
    it prints (a table's or an own-command page's name), ``own_command`` for a page the default target does
    not make (hours of CPU at the paper's size), and ``make``, its function of :class:`PageInputs`."""

    tables: tuple[str, ...]
    make: Callable[[PageInputs], str]
    figures: str = ""
    commands: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    own_command: bool = False


def _pages():
    return importlib.import_module("pipelib.report.pages")  # pandas and the claims: only the page job


def _t(x: PageInputs, *names):
    return [x.tables[n] for n in names]


PAGES: dict[str, Page] = {
    "table2": Page(
        ("table2",), lambda x: _pages().table2_page(x.tables["table2"], x.commands["table2"]), "", ("table2",)
    ),
    "table_rknn": Page(
        ("table_rknn",),
        lambda x: _pages().table_rknn_page(x.tables["table_rknn"], x.commands["table_rknn"]),
        "",
        ("table_rknn",),
    ),
    "headline": Page(
        ("table2", "table_rknn"), lambda x: _pages().headline_page(*_t(x, "table2", "table_rknn"), x.preset)
    ),
    "claims": Page(
        ("claims",), lambda x: _pages().claims_page(x.tables["claims"], x.commands["claims"]), "", ("claims",)
    ),
    "headline_claims": Page(("claims",), lambda x: _pages().headline_claims_page(x.tables["claims"], x.preset)),
    "headline_paper001": Page(
        ("table_ldpfl",),
        lambda x: _pages().headline_paper001_page(x.tables["table_ldpfl"], x.preset),
        optional=("table_ldpfl",),
    ),
    # table2: the regime of Figure 2(d)'s rows
    "paper002": Page(
        ("table2", "table3", "table4", "table5"),
        lambda x: _pages().paper002_page(
            {k: x.tables[k] for k in ("table2", "table3", "table4", "table5")}, x.figures, x.commands, x.data
        ),
        "prefix:p002_",
        ("table2", "table3", "table4", "table5"),
    ),
    # table_rknn: the regime of Figure 2's rows
    "paper003": Page(
        ("table_rknn",), lambda x: _pages().paper003_page(x.figures, x.tables["table_rknn"], x.data), "prefix:p003_"
    ),
    "paper004": Page(
        ("table_ldpdl",),
        lambda x: _pages().paper004_page(x.tables["table_ldpdl"], x.figures, x.commands["table_ldpdl"], x.data),
        "prefix:p004_",
        ("table_ldpdl",),
        optional=("table_ldpdl",),
    ),
    "paper001": Page(
        ("table_ldpfl",),
        lambda x: _pages().paper001_page(x.tables["table_ldpfl"], x.figures, x.commands["table_ldpfl"], x.data),
        "prefix:p001_",
        ("table_ldpfl",),
        optional=("table_ldpfl",),
    ),
    "compare": Page(
        ("compare", "audit"),
        lambda x: _pages().compare_page(
            x.tables["compare"], x.tables["audit"], x.commands["compare"], x.figures, fractions=x.audit_fractions
        ),
        "compare",
        ("compare",),
    ),
    "fedmd_budget": Page(
        ("fedmd_budget",),
        lambda x: _pages().fedmd_budget_page(x.tables["fedmd_budget"], x.figures, x.commands["fedmd_budget"]),
        "budget",
        ("fedmd_budget",),
        own_command=True,
    ),
    "fedmd_ablation": Page(
        ("fedmd_ablation",),
        lambda x: _pages().fedmd_ablation_page(x.tables["fedmd_ablation"], x.commands["fedmd_ablation"]),
        "",
        ("fedmd_ablation",),
        own_command=True,
    ),
}


def register_page(name: str, page: Page) -> Page:
    """Add a page (a method's module registers its own when imported); its name must be new."""
    if name in PAGES:
        raise ValueError(f"page {name!r} is registered already")
    PAGES[name] = page
    return page


def page_module(name: str) -> str:
    """The module that registered page ``name`` (its page job imports it before it looks the page up)."""
    return PAGES[name].make.__module__


def default_pages() -> tuple[str, ...]:
    """The pages the default target makes, in the order they are listed."""
    return tuple(name for name, page in PAGES.items() if not page.own_command)


def own_command_pages() -> tuple[str, ...]:
    return tuple(name for name, page in PAGES.items() if page.own_command)


def command_targets(res: Callable[[str], str], preset: str) -> dict[str, str]:
    """Target name -> the file whose command a page prints: a table's CSV, or an own-command page."""
    names = {name for page in PAGES.values() for name in page.commands}
    own = set(own_command_pages())
    return {n: f"docs/reproduction/{preset}/{n}.md" if n in own else res(f"{n}.csv") for n in sorted(names)}


# -- tables and figures ---------------------------------------------------------------------------------


def _none(d, wc) -> dict:
    return {}


@dataclass(frozen=True)
class View:
    """One table or figure, made by its own rule (``rule``) from result rows or closed forms.

    ``name``: the file, ``<results>/<name>.csv`` for a table, ``<results>/figures/<name>.{png,svg,csv}``
    (the picture twice and the data it is drawn from) for a figure; it may hold a wildcard.  ``inputs`` and
    ``args``: functions of the design (:class:`pipelib.design.Design`) and the job's wildcards returning
    name -> path(s) and the keyword arguments (plain data: Snakemake re-runs the job when they change).
    ``make(m, input, output, args)`` writes it, ``m`` being ``module`` imported (the job's code digest
    covers that module and what it imports).  ``caption`` (a file of workflow/report/) and ``category``
    file it in ``snakemake --report``; ``outputs``: further files of a table (name -> path under the
    results)."""

    rule: str
    name: str
    module: str
    make: Callable
    inputs: Callable = _none
    args: Callable = _none
    caption: str | None = None
    category: str = ""
    figure: bool = False
    outputs: dict = field(default_factory=dict)
    mem_mb: int = 1000
    runtime: int = 5

    @property
    def subcategory(self) -> str | None:
        """A paper's figures go under its tables, in their own subcategory."""
        return "Figures" if self.figure and self.category.startswith("Paper") else None


TABLES, FIGURES, CLAIMS, AUDIT = (f"pipelib.{m}" for m in ("report.tables", "report.figures", "report.claims", "audit"))


def _rounds(paths):
    return [p.replace("result.json", "rounds.parquet") for p in paths]


def _fedmd_view(rule, entries, caption):
    """Tables 3-5 of paper 002: views of FedMD result rows."""
    return View(
        rule,
        rule,
        TABLES,
        lambda m, i, o, a: getattr(m, rule)(a["entries"], o.csv, delta_ref=a["delta_ref"]),
        lambda d, wc: {"runs": d.fedmd.runs_of(getattr(d.fedmd, entries)())},
        lambda d, wc: {"entries": getattr(d.fedmd, entries)(), "delta_ref": d.config["privacy"]["delta_ref"]},
        caption,
        "Paper 002",
    )


def _p003_figure(name, entries):
    """A figure of paper 003 (Figure 2(a)-(c), 2(d)): reverse k-NN result rows, with table_rknn's flags."""
    return View(
        f"figure_{name}",
        name,
        FIGURES,
        lambda m, i, o, a: getattr(m, name)(dict(o.items()), a["entries"], {"table_rknn": i.table}),
        lambda d, wc: {"results": [e["path"] for e in getattr(d.distill, entries)()], "table": d.res("table_rknn.csv")},
        lambda d, wc: {"entries": getattr(d.distill, entries)()},
        f"{name}.rst",
        "Paper 003",
        figure=True,
    )


def _with_table(d, table, made, files):
    """A figure's inputs with the table whose dataset-level flags it carries, where the config makes it."""
    return {**({"table": d.res(f"{table}.csv")} if made else {}), **files}


def _delta(d):
    return d.config["privacy"]["delta_ref"]


def _table2_inputs(d) -> dict:
    """Table 2's rows (their results and per-round files), their repeats' and the centralized baselines'."""
    f = d.fedmd
    rows, repeats = [f.table2_dir(*r) for r in f.table2_rows()], [f.table2_dir(*r) for r in f.table2_repeats()]
    return {
        "results": [f"{r}/result.json" for r in rows],
        "rounds": [f"{r}/rounds.parquet" for r in rows],
        "centralized": [f"{c}/result.json" for _, _, c in f.centralized_runs()],
        "repeats": [f"{r}/result.json" for r in repeats],
        "repeat_rounds": [f"{r}/rounds.parquet" for r in repeats],
    }


def _table2_args(d) -> dict:
    f = d.fedmd
    return {
        "datasets": {k: {**spec, "party_archs": f.party_archs(spec["scenario"])} for k, spec in d.TABLE2.items()},
        "rows": f.table2_rows(),
        "centralized": [(label, arch) for label, arch, _ in f.centralized_runs()],
        "repeats": [(label, run) for label, run, _ in f.table2_repeats()],
        "delta_ref": _delta(d),
    }


_VIEWS = [
    View(
        "partition_summary",
        "partitions",
        TABLES,
        lambda m, i, o, a: m.partition_table(i.summaries, o.csv),
        lambda d, wc: {"summaries": [d.res(f"partitions/{sc}/summary.json") for sc in d.SCENARIOS]},
    ),
    View(
        "privacy_ledger",
        "privacy_ledger",
        TABLES,
        lambda m, i, o, a: m.privacy_ledger(i.releases, o.csv, **a),
        lambda d, wc: {"releases": d.release_files()},
        lambda d, wc: {"delta_ref": _delta(d), "preset": d.config["preset"]},
        "privacy_ledger.rst",
        "Privacy",
    ),
    View(
        "table2",
        "table2",
        TABLES,
        lambda m, i, o, a: m.table2_view(i, o, a),
        lambda d, wc: _table2_inputs(d),
        lambda d, wc: _table2_args(d),
        "table2.rst",
        "Paper 002",
        outputs={"rounds": "table2_rounds.parquet"},
        mem_mb=2000,
        runtime=10,
    ),
    View(
        "table_rknn",
        "table_rknn",
        TABLES,
        lambda m, i, o, a: m.table_rknn(a["labels"], list(i.results), o.csv, delta_ref=a["delta_ref"]),
        lambda d, wc: {"results": [f"{r}/result.json" for _, r in d.distill.rknn_rows()]},
        lambda d, wc: {"labels": [row["dataset"] for row, _ in d.distill.rknn_rows()], "delta_ref": _delta(d)},
        "table_rknn.rst",
        "Paper 003",
    ),
    View(
        "compare",
        "compare",
        TABLES,
        lambda m, i, o, a: m.compare(list(i.results), o.csv, **a),
        lambda d, wc: {"results": d.result_files()},
        lambda d, wc: {"delta_ref": _delta(d)},
        "compare.rst",
        "All methods",
    ),
    View(
        "claims",
        "claims",
        CLAIMS,
        lambda m, i, o, a: m.claims_table(m.load_claims(), dict(i.items()), o.csv, a["preset"]),
        lambda d, wc: d.claim_sources(),
        lambda d, wc: {"preset": d.config["preset"]},
        "claims.rst",
        "Claims",
    ),
    _fedmd_view("table3", "table3_entries", "table3.rst"),
    _fedmd_view("table4", "table4_entries", "table4.rst"),
    _fedmd_view("table5", "table5_entries", "table5.rst"),
    View(
        "figure_p002_privacy_vs_parties",
        "p002_privacy_vs_parties",
        FIGURES,
        lambda m, i, o, a: m.p002_privacy_vs_parties(dict(o.items()), **a),
        args=lambda d, wc: d.P002["figure2abc"],
        caption="p002_privacy_vs_parties.rst",
        category="Paper 002",
        figure=True,
    ),
    View(
        "figure_p002_privacy_vs_k",
        "p002_privacy_vs_k",
        FIGURES,
        lambda m, i, o, a: m.p002_privacy_vs_k(dict(o.items()), **a),
        args=lambda d, wc: {"n": d.P002["figure4"]["n"]},
        caption="p002_privacy_vs_k.rst",
        category="Paper 002",
        figure=True,
    ),
    View(
        "figure_p002_accuracy_vs_parties",
        "p002_accuracy_vs_parties",
        FIGURES,
        lambda m, i, o, a: m.p002_accuracy_vs_parties(dict(o.items()), a["entries"], a["answer"], {"table2": i.table}),
        lambda d, wc: {"runs": d.fedmd.runs_of(d.fedmd.figure2d_entries()), "table": d.res("table2.csv")},
        lambda d, wc: {"entries": d.fedmd.figure2d_entries(), "answer": d.P002["figure2d"]["answer"]},
        "p002_accuracy_vs_parties.rst",
        "Paper 002",
        figure=True,
    ),
    View(
        "table_fedmd_budget",
        "fedmd_budget",
        TABLES,
        lambda m, i, o, a: m.fedmd_budget(a["entries"], o.csv, delta_ref=a["delta_ref"]),
        lambda d, wc: {
            "results": (paths := [e["path"] for e in d.ablation.budget_entries()]),
            "rounds": _rounds(paths),
        },
        lambda d, wc: {"entries": d.ablation.budget_entries(), "delta_ref": _delta(d)},
        "fedmd_budget.rst",
        "Paper 002",
    ),
    View(
        "figure_p002_budget",
        "p002_budget",
        FIGURES,
        lambda m, i, o, a: m.p002_budget(dict(o.items()), i.table),
        lambda d, wc: {"table": d.res("fedmd_budget.csv")},
        caption="p002_budget.rst",
        category="Paper 002",
        figure=True,
    ),
    View(
        "figure_p002_rounds",
        "p002_rounds",
        FIGURES,
        lambda m, i, o, a: m.p002_rounds(dict(o.items()), i.rounds, "FedMD-NFDP", a["k"]),
        lambda d, wc: {"rounds": d.res("table2_rounds.parquet")},
        lambda d, wc: {"k": d.P002["k"]},
        "p002_rounds.rst",
        "Paper 002",
        figure=True,
    ),
    _p003_figure("p003_queries_and_neighbours", "p003_sweep_entries"),
    _p003_figure("p003_local_dp", "p003_local_entries"),
    View(
        "table_fedmd_ablation",
        "fedmd_ablation",
        TABLES,
        lambda m, i, o, a: m.fedmd_ablation(a["entries"], o.csv),
        lambda d, wc: {
            "results": [e["path"] for e in d.ablation.entries()],
            "rounds": _rounds([e["path"] for e in d.ablation.entries() if "pooled" not in e]),
        },
        lambda d, wc: {"entries": d.ablation.entries()},
        "fedmd_ablation.rst",
        "Paper 002",
    ),
    View(
        "table_ldpdl",
        "table_ldpdl",
        TABLES,
        lambda m, i, o, a: m.table_ldpdl(a["entries"], o.csv, delta_ref=a["delta_ref"]),
        lambda d, wc: {"results": d.ldpdl.table_files()},
        lambda d, wc: {"entries": d.ldpdl.table_entries(), "delta_ref": _delta(d)},
        "table_ldpdl.rst",
        "Paper 004",
    ),
    View(
        "figure_p004",
        "p004_{ldset}",
        FIGURES,
        lambda m, i, o, a: m.p004_sweeps(dict(o.items()), a["entries"], {"table_ldpdl": i.get("table")}),
        lambda d, wc: _with_table(
            d,
            "table_ldpdl",
            d.ldpdl.table_entries(),
            {"results": [e["path"] for e in d.ldpdl.figure_entries_of(wc.ldset)]},
        ),
        lambda d, wc: {"entries": d.ldpdl.figure_entries_of(wc.ldset)},
        "p004.rst",
        "Paper 004",
        figure=True,
    ),
    View(
        "table_ldpfl",
        "table_ldpfl",
        TABLES,
        lambda m, i, o, a: m.table_ldpfl(a["entries"], o.csv),
        lambda d, wc: {"results": d.ldpfl.paths("table")},
        lambda d, wc: {"entries": [e for e in d.ldpfl.entries() if e["artifact"] == "table"]},
        "table_ldpfl.rst",
        "Paper 001",
    ),
    View(
        "figure_p001",
        "p001_{p001}",
        FIGURES,
        lambda m, i, o, a: getattr(m, f"p001_{a['figure']}")(
            dict(o.items()), a["entries"], {"table_ldpfl": i.get("table")}
        ),
        lambda d, wc: _with_table(
            d,
            "table_ldpfl",
            d.ldpfl.paths("table"),
            {"results": d.ldpfl.p001_paths(wc.p001), "rounds": _rounds(d.ldpfl.p001_paths(wc.p001))},
        ),
        lambda d, wc: {"figure": wc.p001, "entries": d.ldpfl.p001_entries(wc.p001)},
        "p001.rst",
        "Paper 001",
        figure=True,
    ),
    View(
        "audit_table",
        "audit",
        AUDIT,
        lambda m, i, o, a: m.audit_table(list(i.audits), o.csv),
        lambda d, wc: {"audits": d.audit.table_files()},
        caption="audit.rst",
        category="Audit",
    ),
    View(
        "figure_audit",
        "audit",
        FIGURES,
        lambda m, i, o, a: m.audit_figure(dict(o.items()), i.table),
        lambda d, wc: {"table": d.res("audit.csv")},
        caption="figure_audit.rst",
        category="Audit",
        figure=True,
    ),
    View(
        "figure_compare",
        "compare_{scenario}",
        FIGURES,
        lambda m, i, o, a: m.compare_figure(dict(o.items()), i.table, a["scenario"]),
        lambda d, wc: {"table": d.res("compare.csv")},
        lambda d, wc: {"scenario": wc.scenario},
        "figure_compare.rst",
        "All methods",
        figure=True,
    ),
]

VIEWS: dict[str, View] = {v.rule: v for v in _VIEWS}


def register_view(view: View) -> View:
    """Add a table or figure (a method's module registers its own when imported); its rule must be new."""
    if view.rule in VIEWS:
        raise ValueError(f"table or figure rule {view.rule!r} is registered already")
    VIEWS[view.rule] = view
    return view


def run_view(rule: str, input, output, args: dict):
    """A view job's work: its entry's function, on the job's files and arguments."""
    view = VIEWS[rule]
    return view.make(importlib.import_module(view.module), input, output, args)
