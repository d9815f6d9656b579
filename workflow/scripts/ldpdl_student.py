"""Rule ldpdl_student: the server's student of one AQS iteration, and the next iteration's queries."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.student import ldpdl_student  # noqa: E402

ldpdl_student(Job.of(snakemake), snakemake.params.settings, snakemake.params.loss)
