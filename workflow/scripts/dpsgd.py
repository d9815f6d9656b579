"""Rule dpsgd: one model trained with DP-SGD on all parties' records pooled (the central-DP baseline)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.dpsgd import DpSgdSettings, dpsgd  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
dpsgd(
    scenario=w.scenario,
    arch=w.arch,
    epsilon=float(w.eps),
    delta=p.delta,
    party_paths=list(i.parties),
    test_path=i.test,
    model_path=i.get("model"),
    n_public_classes=p.n_public_classes,
    settings=DpSgdSettings.from_config(p.settings),
    device=p.device,
    threads=snakemake.threads,
    seed=p.seed,
    randomness=p.randomness,
    preset=p.preset,
    release=dict(w),
    out=dict(o),
)
