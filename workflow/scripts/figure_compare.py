"""Rule figure_compare: one scenario's rows of compare.csv, accuracy against epsilon per method."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import compare_figure  # noqa: E402

compare_figure(dict(snakemake.output.items()), snakemake.input[0], snakemake.wildcards.scenario)
