"""Rule figure_p003_local_dp: paper 003 Figure 2(d), randomized response against Collision over epsilon."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p003_local_dp

p003_local_dp(dict(snakemake.output.items()), snakemake.params.entries, {"table_rknn": snakemake.input.table})
