"""Rule figure_p002_privacy_vs_k: paper 002 Figure 4, Theorems 1 and 2 against k."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p002_privacy_vs_k

p002_privacy_vs_k(dict(snakemake.output.items()), n=snakemake.params.n)
