"""Rule centralized: one architecture trained on all parties' records pooled (utility upper bound)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.centralized import centralized  # noqa: E402
from pipelib.train.supervised import TrainSettings  # noqa: E402

p = snakemake.params
centralized(
    Job.of(snakemake),
    TrainSettings.from_config(p.settings, lr=p.lr),
    n_public_classes=p.n_public_classes,
)
