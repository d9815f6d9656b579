"""Rule table_fedmd_ablation: FedMD-NFDP at small k under variants of the loop, with the pooled ceilings
-> <results>/fedmd_ablation.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import fedmd_ablation  # noqa: E402

fedmd_ablation(snakemake.params.entries, snakemake.output[0])
