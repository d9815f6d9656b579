"""Rule ldpdl_encoder: the teachers' frozen encoder of a private dataset, a CNN trained on another
labelled dataset (none of the owners' records)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.teacher_encoder import train_extractor  # noqa: E402

train_extractor(Job.of(snakemake), snakemake.params.settings)
