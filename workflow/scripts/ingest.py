"""Rule ingest: raw files of one dataset -> results/data/{dataset}/*.parquet."""

from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.data.ingest import ingest  # noqa: E402

ingest(
    snakemake.wildcards.dataset,
    snakemake.params.data_root,
    Path(snakemake.output.train).parent,
    verify=snakemake.params.verify,
)
