"""Rule distill_curate: the trusted curator privatizes the sum of the raw answers (the parties', or PATE's
teachers')."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.distill import curate  # noqa: E402

curate(Job.of(snakemake), delta=snakemake.params.delta)  # the job's wildcards key the mechanism's randomness
