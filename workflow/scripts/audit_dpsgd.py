"""Rule audit_dpsgd (the auditor): score the canaries with a DP-SGD model of an audited variant -> audit.json."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit_models import audit_dp_model  # noqa: E402

i, p = snakemake.input, snakemake.params
audit_dp_model(
    canaries_path=i.canaries,
    model_path=i.model,
    releases_path=i.releases,
    label_offset=p.label_offset,
    audit_settings=p.audit,
    fields=p.fields,
    out_json=snakemake.output[0],
)
