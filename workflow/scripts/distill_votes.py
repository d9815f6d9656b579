"""Rule distill_votes: every PATE teacher's votes on the run's queries, for the trusted curator only."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.teachers import teacher_votes  # noqa: E402

teacher_votes(Job.of(snakemake), snakemake.params.settings)
