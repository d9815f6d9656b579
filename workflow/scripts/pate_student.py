"""Rule pate_student: the server's student on PATE's noisy labels."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.student import pate_student  # noqa: E402

pate_student(Job.of(snakemake), snakemake.params.settings, snakemake.params.loss)
