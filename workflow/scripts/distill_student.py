"""Rule distill_student: the server trains a student on the privately labelled public set (reverse k-NN's
labels, or PATE's on its queried rows)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.student import distill_student  # noqa: E402

distill_student(
    Job.of(snakemake),
    snakemake.params.settings,
    teacher_spec=snakemake.wildcards.teacher,
    label_accuracy=snakemake.params.same_labels,
    loss=snakemake.params.loss,
)
