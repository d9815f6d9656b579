"""Rule ldpdl_teachers: every owner's teacher (or PATE's), each fitted on its own records only."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.teachers import train_teachers  # noqa: E402

train_teachers(Job.of(snakemake), snakemake.params.settings, records=snakemake.params.records)
