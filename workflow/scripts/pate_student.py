"""Rule pate_student: the server's student on PATE's noisy labels."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpdl import pate_student  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
pate_student(
    scenario=w.scenario,
    design=w.design,
    labels_path=i.labels,
    guarantee_path=i.guarantee,
    public_path=i.public,
    test_path=i.test,
    settings=p.settings,
    loss=p.loss,
    device=p.device,
    threads=snakemake.threads,
    seed=p.seed,
    preset=p.preset,
    randomness=p.randomness,
    out_result=o.result,
    out_model=o.model,
)
