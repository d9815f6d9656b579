"""Rule table2: the FedMD rows (and their repeats) and centralized baselines -> results/table2.csv (+ per-round
accuracies)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.tables import table2  # noqa: E402

p, i = snakemake.params, snakemake.input
rows = [tuple(r) for r in p.rows]
runs = {row: [(result, rounds)] for row, result, rounds in zip(rows, i.results, i.rounds)}
for row, result, rounds in zip([tuple(r) for r in p.repeats], i.repeats, i.repeat_rounds):
    runs[row].append((result, rounds))
table2(
    p.datasets,
    runs,
    dict(zip([tuple(c) for c in p.centralized], i.centralized)),
    snakemake.output.csv,
    snakemake.output.rounds,
    delta_ref=p.delta_ref,
)
