"""Rules toy_answers and toy_server: one call each into the toy's module."""

from pipelib.logs import to_log

to_log(snakemake)
import toymethod  # noqa: E402

from pipelib.job import Job  # noqa: E402

{"toy_answers": toymethod.answer, "toy_server": toymethod.serve}[snakemake.rule](Job.of(snakemake))
