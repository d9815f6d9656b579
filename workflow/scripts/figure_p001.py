"""Rule figure_p001: paper 001 Figure 3 (clients), 4 (fraction_rounds) or 5 (epsilon)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report import figures  # noqa: E402

p = snakemake.params
tables = {"table_ldpfl": snakemake.input.get("table")}  # its dataset-level flags (pipelib.report.flags)
getattr(figures, f"p001_{p.figure}")(dict(snakemake.output.items()), p.entries, tables)
