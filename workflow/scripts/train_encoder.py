"""Rule train_encoder: fit an encoder on the scenario's public images only (no labels); a UMAP encoder
also reads its base encoder's fitted model (itself fitted on public images only)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.represent import train_encoder  # noqa: E402

train_encoder(Job.of(snakemake), snakemake.params.settings)
