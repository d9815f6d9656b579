"""Rule ldpdl_release: every owner's sanitized answers to the queries of one iteration assigned to it."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.teachers import release  # noqa: E402

release(Job.of(snakemake), snakemake.params.settings, records=snakemake.params.records)
