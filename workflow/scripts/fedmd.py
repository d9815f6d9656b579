"""Rule fedmd: one FedMD row (FedMD-NP, FedMD-NFDP at k, or FedMD-LDP) of Table 2."""

from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.methods.fedmd import run_row  # noqa: E402

w, p, i = snakemake.wildcards, snakemake.params, snakemake.input
run_row(
    scenario=w.scenario,
    method=w.run,
    answer=w.answer,
    party_paths=list(i.parties),
    models=dict(zip(p.archs, i.models)),
    public_index=i.public_index,
    public_data=i.public_data,
    test_path=i.test,
    n_public_classes=p.n_public_classes,
    cfg={**p.fedmd, "threads": snakemake.threads},
    seed=p.seed,
    preset=p.preset,
    out=dict(snakemake.output.items()),
    checkpoint=p.checkpoint,
    ledger_path=i.get("ledger"),
)
