"""Rule distill_aggregate: the server's estimate from privatized releases only."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.distill import aggregate  # noqa: E402

i, o = snakemake.input, snakemake.output
aggregate(
    mechanism=snakemake.wildcards.mech,
    release_paths=list(i.releases),
    guarantee_paths=list(i.guarantees),
    out_counts=o.counts,
    out_summary=o.summary,
)
