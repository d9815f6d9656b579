"""Rule ldpdl_release: every owner's sanitized answers to the queries of one iteration assigned to it."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpdl import by_owner, release  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output


release(
    release_id=dict(w.items()),
    iteration=int(w.iteration),
    mechanism=w.ldmech,
    plan_path=i.plan,
    queries_path=i.queries,
    soft_paths=by_owner(i.soft),
    info_paths=by_owner(i.info),
    seed=p.seed,
    randomness=p.randomness,
    rule=snakemake.rule,
    scenario=w.scenario,
    out_release=o.release,
    out_guarantee=o.guarantee,
)
