"""Rule table_ldpdl: paper 004's Table 1 from LDP-DL and PATE result rows -> <results>/table_ldpdl.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table_ldpdl

p = snakemake.params
table_ldpdl(p.entries, snakemake.output[0], delta_ref=p.delta_ref)
