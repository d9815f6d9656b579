"""Rule figure_p002_accuracy_vs_parties: paper 002 Figure 2(d), accuracy against the number of parties."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p002_accuracy_vs_parties

p002_accuracy_vs_parties(
    dict(snakemake.output.items()), snakemake.params.entries, snakemake.params.answer, {"table2": snakemake.input.table}
)
