"""Rule pate_curate: PATE's trusted curator, GNMax over every teacher's vote."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpdl import pate_curate  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output


pate_curate(
    release_id=dict(w.items()),
    scenario=w.scenario,
    epsilon=float(w.eps),
    delta=p.delta,
    queries=p.queries,
    teachers_path=i.teachers,
    teachers_info=i.teachers_info,
    public_path=i.public,
    settings=p.settings,
    seed=p.seed,
    randomness=p.randomness,
    rule=snakemake.rule,
    out_labels=o.labels,
    out_guarantee=o.guarantee,
)
