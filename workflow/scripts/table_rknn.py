"""Rule table_rknn: the reverse k-NN result rows -> results/table_rknn.csv, beside paper 003's numbers."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table_rknn  # noqa: E402

table_rknn(snakemake.params.labels, list(snakemake.input), snakemake.output[0], delta_ref=snakemake.params.delta_ref)
