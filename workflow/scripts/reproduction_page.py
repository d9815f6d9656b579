"""Rule reproduction_page: one paper's tables and figures as a Markdown page (docs/reproduction/<preset>/),
generated from the results by its entry in pipelib.report.registry; its figures are copied beside it by
rule reproduction_figure."""

import importlib
from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report import pages  # noqa: E402
from pipelib.report.registry import PAGES, PageInputs  # noqa: E402

i, p, name = snakemake.input, snakemake.params, snakemake.wildcards.page
importlib.import_module(p.module)  # the module that registered the page (a method's own, or the registry)
page = PAGES[name]
inputs = PageInputs(
    tables={t: i[t] if t in i.keys() else None for t in page.tables},
    figures={Path(f).stem: f"figures/{Path(f).name}" for f in i.figures},
    data={Path(f).stem: f for f in i.figure_data},
    commands=p.commands,
    preset=p.preset,
    audit_fractions=tuple(p.audit_fractions),
)
pages.write_pages({name: page.make(inputs)}, {name: snakemake.output[0]})
