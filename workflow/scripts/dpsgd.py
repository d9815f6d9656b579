"""Rule dpsgd: one model trained with DP-SGD on all parties' records pooled (the central-DP baseline)."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.dpsgd import DpSgdSettings, dpsgd  # noqa: E402

p = snakemake.params
dpsgd(
    Job.of(snakemake),
    DpSgdSettings.from_config(p.settings),
    delta=p.delta,
    n_public_classes=p.n_public_classes,
)
