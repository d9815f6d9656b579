"""Rule ldpdl_teachers: every owner's teacher (or PATE's), each fitted on its own records only."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpdl import train_teachers  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
train_teachers(
    design=w.design,
    scenario=w.scenario,
    party_paths=list(i.parties),
    settings=p.settings,
    records=p.records,
    threads=snakemake.threads,
    seed=p.seed,
    out_teachers=o.teachers,
    out_info=o.info,
)
