"""Rule partition_summary: per-scenario, per-party record counts -> results/partitions.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import partition_table  # noqa: E402

partition_table(snakemake.input, snakemake.output[0])
