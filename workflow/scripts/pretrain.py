"""Rules pretrain and pretrain_epochs: one architecture trained on the labelled public data (the shared
initialization of paper 002)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.pretrain import pretrain  # noqa: E402
from pipelib.train.supervised import TrainSettings  # noqa: E402

p, w = snakemake.params, snakemake.wildcards
pretrain(
    Job.of(snakemake),
    TrainSettings.from_config(p.settings, lr=p.lr),
    n_classes=int(w.n_classes),
    max_images=p.settings["max_images"],
)
