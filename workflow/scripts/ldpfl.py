"""Rule ldpfl: one LDP-FL (or noise-free federated averaging) run of paper 001."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.job import Job  # noqa: E402
from pipelib.methods.ldpfl import run_row  # noqa: E402
from pipelib.settings import LdpflSettings  # noqa: E402

# the job's wildcards (scenario, flmech, frac, rounds) key every client's coins, with the round and client
run_row(Job.of(snakemake), LdpflSettings.parse(snakemake.params.settings))
