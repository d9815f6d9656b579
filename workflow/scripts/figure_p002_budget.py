"""Rule figure_p002_budget: FedMD's accuracy against its distillation budget (figure of fedmd_budget.csv)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p002_budget  # noqa: E402

p002_budget(dict(snakemake.output.items()), snakemake.input[0])
