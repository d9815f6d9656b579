"""Rule party_data: write one party's private records as its own table."""

from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.data.partition import extract_party  # noqa: E402

extract_party(
    snakemake.input.assignment,
    Path(snakemake.input.private_train).parent,
    int(snakemake.wildcards.party),
    snakemake.output[0],
)
