"""Rule audit_distill (the auditor): score the canaries from a reverse k-NN release -> audit.json."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit_models import audit_distill  # noqa: E402

p, w = snakemake.params, snakemake.wildcards
audit_distill(
    teacher_spec=w.teacher,
    mechanism=w.mech,
    inputs=dict(snakemake.input.items()),  # canaries, release, guarantee, known, centers, model
    encoder=p.encoder,
    audit_settings=p.audit,
    fields=p.fields,
    out_json=snakemake.output[0],
)
