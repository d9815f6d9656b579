"""Rule table4: paper 002's Table 4 as a view of FedMD result rows -> <results>/table4.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table4

p = snakemake.params
table4(p.entries, snakemake.output[0], delta_ref=p.delta_ref)
