"""Rule cluster: the queries are k-means centers of the public embeddings."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.rknn import cluster  # noqa: E402

o = snakemake.output
cluster(
    snakemake.input[0],
    int(snakemake.wildcards.s),
    snakemake.params.seed,
    snakemake.params.iterations,
    o.centers,
    o.assign,
    snakemake.params.starts,
)
