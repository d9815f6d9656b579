"""Rule partition (the dealer): decide who holds which record of a scenario."""

from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.data.partition import make_partition  # noqa: E402

make_partition(
    snakemake.wildcards.scenario,
    snakemake.params.scenario,
    snakemake.params.task,
    snakemake.params.seed,
    private_dir=Path(snakemake.input.private_train).parent,
    public_dir=Path(snakemake.input.public_train).parent,
    out=dict(snakemake.output.items()),
)
