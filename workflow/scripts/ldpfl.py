"""Rule ldpfl: one LDP-FL (or noise-free federated averaging) run of paper 001."""

from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpfl import run_row  # noqa: E402

p, i = snakemake.params, snakemake.input
run_row(
    release=dict(snakemake.wildcards),  # scenario, flmech, frac, rounds: key every client's coins (with t, i)
    assignment_path=i.assignment,
    private_dir=Path(i.private_train).parent,
    test_path=i.test,
    settings={**p.settings, "threads": snakemake.threads},
    seed=p.seed,
    preset=p.preset,
    randomness=p.randomness,
    out=dict(snakemake.output.items()),
    checkpoint=p.checkpoint,
)
