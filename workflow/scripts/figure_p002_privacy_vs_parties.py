"""Rule figure_p002_privacy_vs_parties: paper 002 Figure 2(a)-(c), closed forms (and the exact sigma)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p002_privacy_vs_parties

p002_privacy_vs_parties(dict(snakemake.output.items()), **snakemake.params.settings)
