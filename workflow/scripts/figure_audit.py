"""Rule figure_audit: claimed vs empirical epsilon per audited release."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import audit_figure  # noqa: E402

audit_figure(dict(snakemake.output.items()), snakemake.input[0])
