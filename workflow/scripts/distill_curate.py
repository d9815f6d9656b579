"""Rule distill_curate: the trusted curator privatizes the sum of the parties' raw answers."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.distill import curate

o = snakemake.output
curate(
    release=dict(snakemake.wildcards),  # keys the mechanism's randomness: every wildcard of the job
    answer_paths=list(snakemake.input.answers),
    seed=snakemake.params.seed,
    out_release=o.release,
    out_guarantee=o.guarantee,
    randomness=snakemake.params.randomness,
)
