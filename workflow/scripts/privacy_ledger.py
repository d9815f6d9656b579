"""Rule privacy_ledger: the guarantee of every privatized release of every method -> results/privacy_ledger.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import privacy_ledger  # noqa: E402

privacy_ledger(
    snakemake.input, snakemake.output[0], preset=snakemake.params.preset, delta_ref=snakemake.params.delta_ref
)
