"""Rule table3: paper 002's Table 3 as a view of FedMD result rows -> <results>/table3.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table3

p = snakemake.params
table3(p.entries, snakemake.output[0], delta_ref=p.delta_ref)
