"""Rule ingest: raw files of one dataset -> <results>/data/{dataset}/*.parquet."""

from pathlib import Path

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.data.ingest import dataset, ingest

name = snakemake.wildcards.dataset
ingest(
    name,
    None,
    Path(snakemake.output.train).parent,
    verify=snakemake.params.verify,
    files=dict(zip(dataset(name).files(), snakemake.input.raw)),  # the raw inputs, in the dataset's order
)
