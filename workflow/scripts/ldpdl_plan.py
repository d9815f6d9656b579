"""Rule ldpdl_plan: the server's query plan (who answers which slot, per-answer epsilon, first queries)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.io import read_table  # noqa: E402
from pipelib.methods.ldpdl import plan  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
plan(
    # the same plan for every mechanism, epsilon and query sampling: paired runs
    key=f"{w.scenario}/q{w.nq}/{w.design}",
    owners=p.owners,
    public_n=read_table(i.public, columns=["index"]).num_rows,
    per_iteration=p.per_iteration,
    iterations=p.iterations,
    per_query=int(w.nq),
    total_epsilon=float(w.eps),
    seed=p.seed,
    out_plan=o.plan,
    out_queries=o.queries,
)
