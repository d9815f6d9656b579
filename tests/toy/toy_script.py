"""Rules toy_answers, toy_server and table_toy: one call each into the toy's module."""

from pipelib.logs import to_log

to_log(snakemake)
import toymethod  # noqa: E402

from pipelib.job import Job  # noqa: E402

if snakemake.rule == "table_toy":
    toymethod.table(list(snakemake.input), snakemake.output[0])
else:
    {"toy_answers": toymethod.answer, "toy_server": toymethod.serve}[snakemake.rule](Job.of(snakemake))
