"""Rule distill_label: the server labels the public set from the aggregate."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.distill import label  # noqa: E402

label(Job.of(snakemake))
