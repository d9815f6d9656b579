"""Rule distill_curate: the trusted curator privatizes the sum of the parties' raw answers."""

from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.methods.distill import curate  # noqa: E402

w, o = snakemake.wildcards, snakemake.output
curate(
    teacher_spec=w.teacher,
    mechanism=w.cmech,
    answer_paths=list(snakemake.input.answers),
    scenario=w.scenario,
    seed=snakemake.params.seed,
    out_release=o.release,
    out_guarantee=o.guarantee,
)
