"""Rule ldpdl_ceiling: paper 004's noise-free reference, the student on true labels of random public queries."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.student import ldpdl_ceiling  # noqa: E402

p = snakemake.params
ldpdl_ceiling(Job.of(snakemake), p.settings, p.loss, p.queries)
