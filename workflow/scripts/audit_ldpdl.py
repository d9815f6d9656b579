"""Rule audit_ldpdl (the auditor): score the canaries with an LDP-DL or PATE run's final student -> audit.json."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit_models import audit_student  # noqa: E402

i, p = snakemake.input, snakemake.params
audit_student(
    method=p.method,
    canaries_path=i.canaries,
    model_path=i.model,
    claim_path=i.claim,
    audit_settings=p.audit,
    fields=p.fields,
    out_json=snakemake.output[0],
)
