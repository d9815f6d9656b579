"""Rule ldpdl_plan: the server's query plan (who answers which slot, per-answer epsilon, first queries)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.io import read_table  # noqa: E402
from pipelib.job import Job  # noqa: E402
from pipelib.methods.ldpdl import plan  # noqa: E402

p = snakemake.params
plan(
    Job.of(snakemake),
    owners=p.owners,
    public_n=read_table(snakemake.input.public, columns=["index"]).num_rows,
    per_iteration=p.per_iteration,
    iterations=p.iterations,
)
