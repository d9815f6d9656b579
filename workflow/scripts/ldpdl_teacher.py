"""Rule ldpdl_teacher: an owner's teacher on its own shard, and its softmax on the public pool."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpdl import train_teacher  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
train_teacher(
    owner=int(w.party),
    scenario=w.scenario,
    party_path=i.party,
    public_path=i.public,
    settings=p.settings,
    device=p.device,
    threads=snakemake.threads,
    seed=p.seed,
    out_model=o.model,
    out_soft=o.soft,
    out_info=o.info,
)
