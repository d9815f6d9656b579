"""Rule table5: paper 002's Table 5 as a view of FedMD result rows -> <results>/table5.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table5

p = snakemake.params
table5(p.entries, snakemake.output[0], delta_ref=p.delta_ref)
