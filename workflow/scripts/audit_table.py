"""Rule audit_table: every audited release's row -> results/audit.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.audit import audit_table  # noqa: E402

audit_table(list(snakemake.input), snakemake.output[0])
