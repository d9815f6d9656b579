"""Rule train_encoder: fit an encoder on the scenario's public images only (no labels); a UMAP encoder
also reads its base encoder's fitted model (itself fitted on public images only)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.represent import train_encoder  # noqa: E402

w, p, i = snakemake.wildcards, snakemake.params, snakemake.input
train_encoder(
    name=w.encoder,
    settings=p.settings,
    public_path=i.public,
    seed=p.seed,
    device=p.device,
    threads=snakemake.threads,
    out_model=snakemake.output[0],
    base_models=list(i.base),
    checkpoint=p.checkpoint,
)
