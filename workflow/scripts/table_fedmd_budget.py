"""Rule table_fedmd_budget: FedMD-NP and FedMD-NFDP against the distillation budget -> <results>/fedmd_budget.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import fedmd_budget  # noqa: E402

p = snakemake.params
fedmd_budget(p.entries, snakemake.output[0], delta_ref=p.delta_ref)
