"""Rule distill_label: the server labels the public set from the aggregate."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.distill import label  # noqa: E402

i = snakemake.input
label(
    release=dict(snakemake.wildcards),
    seed=snakemake.params.seed,
    counts_npy=i.counts,
    inputs={k: v for k, v in i.items() if k != "counts"},
    out_labels=snakemake.output[0],
)
