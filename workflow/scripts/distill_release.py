"""Rule distill_release: a party's locally privatized answers (each record randomized on its own)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.distill import party_release

i, o = snakemake.input, snakemake.output
party_release(
    release=dict(snakemake.wildcards),  # keys the mechanism's randomness: every wildcard of the job
    party_path=i.party,
    inputs={k: v for k, v in i.items() if k != "party"},
    seed=snakemake.params.seed,
    out_release=o.release,
    out_guarantee=o.guarantee,
    randomness=snakemake.params.randomness,
)
