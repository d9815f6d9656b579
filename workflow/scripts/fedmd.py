"""Rule fedmd: one FedMD row (FedMD-NP, FedMD-NFDP at k, or FedMD-LDP) of Table 2."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.fedmd import run_row

p, i = snakemake.params, snakemake.input
run_row(
    release=dict(snakemake.wildcards),  # scenario, answer, run: keys FedMD-LDP's noise (with the party)
    party_paths=list(i.parties),
    models=dict(zip(p.archs, i.models)),
    public_path=i.public,
    test_path=i.test,
    n_public_classes=p.n_public_classes,
    cfg={**p.fedmd, "threads": snakemake.threads},
    seed=p.seed,
    preset=p.preset,
    out=dict(snakemake.output.items()),
    checkpoint=p.checkpoint,
    ledger_path=i.get("ledger"),
    randomness=p.randomness,
)
