"""Rule table2: the FedMD rows and centralized baselines -> results/table2.csv (+ per-round accuracies)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table2  # noqa: E402

p, i = snakemake.params, snakemake.input
rows = [tuple(r) for r in p.rows]
table2(
    p.datasets,
    dict(zip(rows, i.results)),
    dict(zip([tuple(c) for c in p.centralized], i.centralized)),
    snakemake.output.csv,
    snakemake.output.rounds,
    dict(zip(rows, i.rounds)),
    delta_ref=p.delta_ref,
)
