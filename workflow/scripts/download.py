"""Rule download: fetch the torchvision datasets into the data root (only when download: true)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.data.download import download  # noqa: E402

for name in snakemake.params.datasets:
    download(name, snakemake.params.data_root)
