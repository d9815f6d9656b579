"""Rule ldpdl_release: every owner's sanitized answers to the queries of one iteration assigned to it."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpdl import release  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output


release(
    release_id=dict(w.items()),
    iteration=int(w.iteration),
    mechanism=w.ldmech,
    plan_path=i.plan,
    queries_path=i.queries,
    teachers_path=i.teachers,
    teachers_info=i.teachers_info,
    public_path=i.public,
    settings=p.settings,
    records=p.records,
    seed=p.seed,
    randomness=p.randomness,
    rule=snakemake.rule,
    scenario=w.scenario,
    design=w.design,
    out_release=o.release,
    out_guarantee=o.guarantee,
    out_records=o.records,
)
