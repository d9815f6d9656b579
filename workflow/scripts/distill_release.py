"""Rule distill_release: a party's locally privatized answers (each record randomized on its own)."""

from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.methods.distill import party_release  # noqa: E402

w, i, o = snakemake.wildcards, snakemake.input, snakemake.output
party_release(
    teacher_spec=w.teacher,
    mechanism=w.lmech,
    party_path=i.party,
    inputs={k: v for k, v in i.items() if k != "party"},
    scenario=w.scenario,
    party=int(w.party),
    seed=snakemake.params.seed,
    out_release=o.release,
    out_guarantee=o.guarantee,
)
