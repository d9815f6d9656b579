"""Rule pate_curate: PATE's trusted curator, GNMax over every teacher's vote."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.ldpdl import pate_curate  # noqa: E402

p = snakemake.params
pate_curate(Job.of(snakemake), p.settings, delta=p.delta, queries=p.queries)
