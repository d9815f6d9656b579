"""Rule audit_distill (the auditor): score the canaries from a reverse k-NN release -> audit.json."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit import audit_distill  # noqa: E402

i, p, w = snakemake.input, snakemake.params, snakemake.wildcards
audit_distill(
    teacher_spec=w.teacher,
    mechanism=w.mech,
    canaries_path=i.canaries,
    release_path=i.release,
    guarantee_path=i.guarantee,
    known_paths=list(i.known),
    centers_npy=i.centers,
    encoder=p.encoder,
    model_paths=list(i.model),
    audit_settings=p.audit,
    fields=p.fields,
    out_json=snakemake.output[0],
)
