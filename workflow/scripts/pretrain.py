"""Rule pretrain: one architecture trained on the labelled public data (shared initialization)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.pretrain import pretrain  # noqa: E402
from pipelib.train.supervised import TrainSettings  # noqa: E402

w, p, i = snakemake.wildcards, snakemake.params, snakemake.input
pretrain(
    arch=w.arch,
    train_path=i.train,
    test_path=i.test,
    n_classes=int(w.n_classes),
    settings=TrainSettings.from_config(p.settings, lr=p.lr),
    max_images=p.settings["max_images"],
    seed=p.seed,
    device=p.device,
    threads=snakemake.threads,
    out_model=snakemake.output.model,
    out_summary=snakemake.output.summary,
    checkpoint=p.checkpoint,
)
