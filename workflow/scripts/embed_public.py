"""Rule embed_public: the public pool's embeddings (row i = row i of the partition's public index)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.represent import embed_public  # noqa: E402

p, i = snakemake.params, snakemake.input
embed_public(
    settings=p.settings,
    public_path=i.public,
    model_paths=list(i.model),
    device=p.device,
    threads=snakemake.threads,
    out_npy=snakemake.output[0],
)
