"""Rule distill_student: the server trains a student on the privately labelled public set."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.distill import student  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
student(
    teacher_spec=w.teacher,
    scenario=w.scenario,
    labels_path=i.labels,
    summary_path=i.summary,
    public_path=i.public,
    test_path=i.test,
    settings=p.settings,
    device=p.device,
    threads=snakemake.threads,
    seed=p.seed,
    preset=p.preset,
    out_result=o.result,
    out_model=o.model,
    label_accuracy=p.same_labels,
    checkpoint=p.checkpoint,
)
