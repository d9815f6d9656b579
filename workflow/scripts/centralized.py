"""Rule centralized: one architecture trained on all parties' records pooled (utility upper bound)."""
from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.experiments import centralized  # noqa: E402

w, p, s = snakemake.wildcards, snakemake.params, snakemake.params.settings
centralized(w.scenario, w.arch, list(snakemake.input.parties), snakemake.input.model, snakemake.input.test,
            p.n_public_classes, s["epochs"], s["batch"], p.lr, p.device, snakemake.threads, p.seed,
            snakemake.output[0], checkpoint=p.checkpoint)
