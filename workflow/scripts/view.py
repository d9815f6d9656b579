"""Every table and figure rule (pipelib.report.registry.VIEWS, one rule each in report.smk): its entry's
function on the job's inputs, outputs and arguments."""

import importlib

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.report.registry import run_view  # noqa: E402

importlib.import_module(snakemake.params.registered)  # the module that registered the view (a method's own)
run_view(snakemake.rule, snakemake.input, snakemake.output, snakemake.params.args)
