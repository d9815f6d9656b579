"""Rule figure_p003_queries_and_neighbours: paper 003 Figure 2(a)-(c), accuracy against s and k."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p003_queries_and_neighbours

p003_queries_and_neighbours(
    dict(snakemake.output.items()), snakemake.params.entries, {"table_rknn": snakemake.input.table}
)
