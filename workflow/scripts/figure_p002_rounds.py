"""Rule figure_p002_rounds: paper 002 Figure 3, every party's accuracy per round (Table 2's NFDP rows)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p002_rounds

p002_rounds(dict(snakemake.output.items()), snakemake.input.rounds, "FedMD-NFDP", snakemake.params.k)
