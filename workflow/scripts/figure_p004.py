"""Rule figure_p004: paper 004 Figures 4-6 for one dataset (accuracy against epsilon, N_Q and L)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.figures import p004_sweeps

tables = {"table_ldpdl": snakemake.input.get("table")}  # its dataset-level flags (pipelib.report.flags)
p004_sweeps(dict(snakemake.output.items()), snakemake.params.entries, tables)
