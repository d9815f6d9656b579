"""Rule reproduction_pages: the paper tables as Markdown pages (docs/reproduction/<preset>/), generated."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report import pages

i, p = snakemake.input, snakemake.params
pages.write_pages(
    {
        "table2": pages.table2_page(i.table2, p.commands["table2"]),
        "table_rknn": pages.table_rknn_page(i.table_rknn, p.commands["table_rknn"]),
        "headline": pages.headline_page(i.table2, i.table_rknn, p.preset),
    },
    dict(snakemake.output.items()),
)
