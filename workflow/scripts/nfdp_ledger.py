"""Rule nfdp_ledger: the parties' ledger rows of one (scenario, sampling, k) -> ledger.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.nfdp import write_ledger  # noqa: E402

write_ledger(snakemake.input, snakemake.output[0])
