"""Rule fedmd: one FedMD row (FedMD-NP, FedMD-NFDP at k, or FedMD-LDP) of Table 2."""
from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib.experiments import fedmd_row  # noqa: E402

w, p, i = snakemake.wildcards, snakemake.params, snakemake.input
fedmd_row(w.scenario, w.method, w.answer, list(i.parties), dict(zip(p.archs, i.models)), i.public_index,
          i.public_data, i.test, p.n_public_classes, {**p.fedmd, "threads": snakemake.threads}, p.seed, p.preset,
          snakemake.output.result, snakemake.output.rounds, checkpoint=p.checkpoint, ledger_path=i.get("ledger"))
