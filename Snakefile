# pipelib: private federated knowledge distillation, from raw data to paper tables.
# The stage chain is in docs/methods.md; every rule lives in workflow/rules/.
import os

from snakemake.utils import min_version

min_version("9.0")


# The defaults sit beside this Snakefile (also under --directory); presets/*.yaml and --config override them.
configfile: os.path.join(workflow.basedir, "config.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/nfdp.smk"
include: "workflow/rules/fedmd.smk"
include: "workflow/rules/represent.smk"
include: "workflow/rules/distill.smk"
include: "workflow/rules/ldpdl.smk"
include: "workflow/rules/ldpfl.smk"
include: "workflow/rules/dpsgd.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/audit.smk"


report: report_description()  # the report's first page: the papers' claims, checked


rule all:
    default_target: True
    input:
        D.all_targets(),


check_roles()  # every rule has a role in the threat model (pipelib.stages)
check_devices()  # a device this machine cannot honour fails before any job


onstart:
    announce_plan()


onsuccess:
    summarize_run()
