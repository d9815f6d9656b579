"""Rule centralized: one architecture trained on all parties' records pooled (utility upper bound)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.centralized import centralized  # noqa: E402
from pipelib.train.supervised import TrainSettings  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
centralized(
    scenario=w.scenario,
    arch=w.arch,
    party_paths=list(i.parties),
    model_path=i.model,
    test_path=i.test,
    n_public_classes=p.n_public_classes,
    settings=TrainSettings.from_config(p.settings, lr=p.lr),
    device=p.device,
    threads=snakemake.threads,
    seed=p.seed,
    preset=p.preset,
    out_result=o.result,
    out_model=o.model,
    checkpoint=p.checkpoint,
)
