"""Rule table_ldpfl: paper 001's Table 1 from LDP-FL and FedAvg result rows -> <results>/table_ldpfl.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table_ldpfl  # noqa: E402

table_ldpfl(snakemake.params.entries, snakemake.output[0])
