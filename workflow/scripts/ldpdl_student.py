"""Rule ldpdl_student: the server's student of one AQS iteration, and the next iteration's queries."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.ldpdl import student_iteration  # noqa: E402

student_iteration(Job.of(snakemake), snakemake.params.settings, snakemake.params.loss)
