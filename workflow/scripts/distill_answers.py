"""Rule distill_answers: a party's raw teacher answers, for the trusted curator of a central mechanism."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.distill import party_answers  # noqa: E402

i = snakemake.input
party_answers(
    teacher_spec=snakemake.wildcards.teacher,
    party_path=i.party,
    inputs={k: v for k, v in i.items() if k != "party"},
    out_npy=snakemake.output[0],
)
