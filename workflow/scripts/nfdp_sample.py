"""Rule nfdp_sample: one party draws its NFDP sample from its own records."""

from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.methods.nfdp import sample_party  # noqa: E402

w = snakemake.wildcards
sample_party(
    snakemake.input.party,
    w.scenario,
    int(w.party),
    w.sampling,
    int(w.k),
    snakemake.params.seed,
    out=dict(snakemake.output.items()),
)
