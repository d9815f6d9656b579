"""Rule reproduction_page: one paper's tables and figures as a Markdown page (docs/reproduction/<preset>/),
generated from the results; its figures are copied beside it by rule reproduction_figure."""

from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report import pages

i, p, page = snakemake.input, snakemake.params, snakemake.wildcards.page
figures = {Path(f).stem: f"figures/{Path(f).name}" for f in i.figures}
data = {Path(f).stem: f for f in i.figure_data}
table = {name: i[name] if name in i.keys() else None for name in ("table_ldpdl", "table_ldpfl")}
make = {
    "table2": lambda: pages.table2_page(i.table2, p.commands["table2"]),
    "table_rknn": lambda: pages.table_rknn_page(i.table_rknn, p.commands["table_rknn"]),
    "headline": lambda: pages.headline_page(i.table2, i.table_rknn, p.preset),
    "headline_paper001": lambda: pages.headline_paper001_page(table["table_ldpfl"], p.preset),
    "paper002": lambda: pages.paper002_page(
        {k: i[k] for k in ("table2", "table3", "table4", "table5")}, figures, p.commands, data
    ),
    "fedmd_budget": lambda: pages.fedmd_budget_page(i.fedmd_budget, figures, p.commands["fedmd_budget"]),
    "fedmd_ablation": lambda: pages.fedmd_ablation_page(i.fedmd_ablation, p.commands["fedmd_ablation"]),
    "paper003": lambda: pages.paper003_page(figures, i.table_rknn, data),
    "paper004": lambda: pages.paper004_page(table["table_ldpdl"], figures, p.commands["table_ldpdl"], data),
    "paper001": lambda: pages.paper001_page(table["table_ldpfl"], figures, p.commands["table_ldpfl"], data),
    "compare": lambda: pages.compare_page(
        i.compare, i.audit, p.commands["compare"], figures, fractions=p.audit_fractions
    ),
    "claims": lambda: pages.claims_page(i.claims, p.commands["claims"]),
    "headline_claims": lambda: pages.headline_claims_page(i.claims, p.preset),
}
pages.write_pages({page: make[page]()}, {page: snakemake.output[0]})
