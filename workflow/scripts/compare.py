"""Rule compare: every method's result rows in one table -> results/compare.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import compare  # noqa: E402

compare(list(snakemake.input), snakemake.output[0], delta_ref=snakemake.params.delta_ref)
