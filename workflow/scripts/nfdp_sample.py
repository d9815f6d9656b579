"""Rule nfdp_sample: one party draws its NFDP sample from its own records."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.nfdp import sample_party  # noqa: E402

sample_party(
    snakemake.input.party,
    release=Job.of(snakemake).release_id,  # the wildcards and the settings digest key the draw
    seed=snakemake.params.seed,
    out=dict(snakemake.output.items()),
    randomness=snakemake.params.randomness,
)
