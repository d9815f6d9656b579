"""Rules fedmd and fedmd_budget: one FedMD row (FedMD-NP, FedMD-NFDP at k, or FedMD-LDP) of Table 2 or
of the distillation-budget ablation."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.fedmd import run_row  # noqa: E402
from pipelib.settings import FedmdSettings  # noqa: E402

p = snakemake.params
run_row(
    Job.of(snakemake),  # its wildcards (scenario, answer, run) key FedMD-LDP's noise, with the party
    FedmdSettings.parse(p.fedmd),
    models=dict(zip(p.archs, snakemake.input.models)),
    n_public_classes=p.n_public_classes,
)
