"""Rule reproduction_pages: the papers' tables and figures as Markdown pages (docs/reproduction/<preset>/),
generated from the results; the figures are copied beside them."""

import shutil
from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.io import atomic_path
from pipelib.report import pages

i, o, p = snakemake.input, snakemake.output, snakemake.params
for source, target in zip(i.figures, o.figures):
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)
relative = {Path(f).stem: f"figures/{Path(f).name}" for f in o.figures}
pages.write_pages(
    {
        "table2": pages.table2_page(i.table2, p.commands["table2"]),
        "table_rknn": pages.table_rknn_page(i.table_rknn, p.commands["table_rknn"]),
        "headline": pages.headline_page(i.table2, i.table_rknn, p.preset),
        "paper002": pages.paper002_page({k: i[k] for k in ("table3", "table4", "table5")}, relative, p.commands),
        "paper003": pages.paper003_page(relative),
        "paper004": pages.paper004_page(
            i.table_ldpdl[0] if i.table_ldpdl else None,
            {k: v for k, v in relative.items() if k.startswith("p004_")},
            p.commands["table_ldpdl"],
        ),
        "paper001": pages.paper001_page(
            i.table_ldpfl[0] if i.table_ldpfl else None,
            {k: v for k, v in relative.items() if k.startswith("p001_")},
            p.commands["table_ldpfl"],
        ),
    },
    {k: o[k] for k in ("table2", "table_rknn", "headline", "paper002", "paper003", "paper004", "paper001")},
)
