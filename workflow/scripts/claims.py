"""Rule claims: the papers' claims (src/pipelib/claims.yaml) checked on this run's tables -> results/claims.csv."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.claims import claims_table, load_claims  # noqa: E402

claims_table(load_claims(), dict(snakemake.input.items()), snakemake.output[0], snakemake.params.preset)
