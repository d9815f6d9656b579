"""Rule embed_party: a party embeds its own records with the public encoder."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.represent import embed_party  # noqa: E402

p, i = snakemake.params, snakemake.input
embed_party(
    settings=p.settings,
    party_path=i.party,
    model_paths=list(i.model),
    device=p.device,
    threads=snakemake.threads,
    out_npy=snakemake.output[0],
)
