"""Rule distill_release: a party's locally privatized answers (each record randomized on its own)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.distill import party_release  # noqa: E402

party_release(Job.of(snakemake))  # every wildcard of the job keys the mechanism's randomness
