"""Rule pretrain: one architecture trained on the labelled public data (shared initialization)."""
from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.experiments import pretrain  # noqa: E402

w, p, s = snakemake.wildcards, snakemake.params, snakemake.params.settings
pretrain(w.arch, snakemake.input.train.rsplit("/", 1)[0], int(w.n_classes), s["epochs"], s["batch"], p.lr, p.seed,
         p.device, snakemake.threads, snakemake.output.model, snakemake.output.summary, max_images=s["max_images"],
         checkpoint=p.checkpoint)
