"""Rule audit_validation: the auditor on randomized response of known epsilon (or no mechanism)."""

import math

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit import audit_validation  # noqa: E402
from pipelib.job import Job  # noqa: E402

name = snakemake.wildcards.name
audit_validation(
    epsilon=math.inf if name == "none" else float(name.removeprefix("rr-eps")),
    audit_settings=snakemake.params.audit,
    seed=snakemake.params.seed,
    randomness=snakemake.params.randomness,
    fields=snakemake.params.fields,
    release=Job.of(snakemake).release_id,
    out_json=snakemake.output[0],
)
