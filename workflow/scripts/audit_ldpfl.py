"""Rule audit_ldpfl (the auditor): score the canaries with an LDP-FL run's final global model -> audit.json."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit_models import audit_ldpfl_model  # noqa: E402

i, p = snakemake.input, snakemake.params
audit_ldpfl_model(
    canaries_path=i.canaries,
    model_path=i.model,
    releases_path=i.releases,
    audit_settings=p.audit,
    fields=p.fields,
    out_json=snakemake.output[0],
)
