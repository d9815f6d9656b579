"""Rule audit_fedmd (the auditor): score the canaries with party 0's final FedMD model -> audit.json."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit_models import audit_party_model  # noqa: E402

i, p = snakemake.input, snakemake.params
audit_party_model(
    method=p.method,
    canaries_path=i.canaries,
    models_path=i.models,
    label_offset=p.label_offset,
    guarantee_paths=list(i.ledger),
    audit_settings=p.audit,
    fields=p.fields,
    out_json=snakemake.output[0],
)
