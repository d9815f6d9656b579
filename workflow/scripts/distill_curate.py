"""Rule distill_curate: the trusted curator privatizes the sum of the raw answers (the parties', or PATE's
teachers')."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.distill import curate

o = snakemake.output
curate(
    release=dict(snakemake.wildcards),  # keys the mechanism's randomness: every wildcard of the job
    answer_paths=list(snakemake.input.answers),
    inputs={k: v for k, v in snakemake.input.items() if k != "answers"},
    delta=snakemake.params.delta,
    seed=snakemake.params.seed,
    out_release=o.release,
    out_guarantee=o.guarantee,
    randomness=snakemake.params.randomness,
)
