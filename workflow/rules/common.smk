# Config validation, wildcard constraints, and what needs Snakemake itself (code digests, raw-data links, the
# run's start and end).  The experiment design (every run, table, figure and page the config asks for, and
# the paths and inputs of every job) is pipelib.design.Design, built once below as D: the rules files read
# its shared helpers by the names given below and each method's part as D.<part> (D.fedmd.inputs).
import os
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate as validate_schema

from pipelib import vocab
from pipelib.boundary import rule_roles
from pipelib.config import ConfigError, scenarios, validate
from pipelib.settings import ldpfl_params
from pipelib.config import encoder_settings as resolved_encoder
from pipelib.data import ingest as raw
from pipelib.design import LDPDL_TABLE_ARMS, Design, DesignError
from pipelib import integrity
from pipelib.plan import check_sizes
from pipelib.privacy.nfdp import STRATIFIED
from pipelib import provenance
from pipelib.provenance import code_digest
from pipelib.report.registry import command_targets as page_command_targets
from pipelib.report.registry import page_module
from pipelib.report.registry import VIEWS
from pipelib.runs import FEDMD_RUN, LDPDL_RUN, LDPDL_WILDCARDS, LDPFL_RUN, PATE_RUN
from pipelib.runs import PATE_TEACHERS, TEACHER_RUN, AuditRun, FedmdRun, LdpflRun
from pipelib.runs import BUDGET_WILDCARDS, BudgetPoint

try:
    # pipelib's messages name the key and the allowed values; then the catalog's convention
    CONFIG_SCHEMA = os.path.join(
        workflow.basedir, "workflow", "schemas", "config.schema.yaml"
    )
    validate(config, CONFIG_SCHEMA)
    validate_schema(config, CONFIG_SCHEMA)
    # k above a party's n and the like fail here, before any job (as in pipelib check-config)
    check_sizes({**config, "scenarios": scenarios(config)}, config["results_dir"])
    integrity.note_dry_run_lock(
        sys.argv
    )  # a dry run in a locked folder: a real run will be refused
except ConfigError as err:
    raise WorkflowError(str(err)) from None

D = Design(config)
# the design's shared helpers, by these names in every rule file; a method's own are D.<part>.<name>
# (D.fedmd.inputs, D.ldpdl.run_dir: pipelib.design)
res, seed_of, SCENARIOS = D.res, D.seed_of, D.SCENARIOS
party_ids, party_table, public_inputs = D.party_ids, D.party_table, D.public_inputs


EPS = r"(0|[1-9][0-9]*)\.([0-9]*[1-9]|0)"  # canonical float text (repr): '0.1', '1.0', never '1' or '0.10'
NOISY = [m for m in vocab.MECHANISMS if m != "none"]


def alternatives(names):
    return "|".join(map(re.escape, names))


wildcard_constraints:
    dataset=alternatives(vocab.DATASETS),
    public=alternatives(vocab.DATASETS),
    split=alternatives(vocab.SPLITS),
    scenario=alternatives(SCENARIOS),
    sampling=alternatives(vocab.SAMPLINGS + (STRATIFIED,)),  # stratified: the loop ablation's only
    k="[1-9][0-9]*",
    party="0|[1-9][0-9]*",
    arch=vocab.ARCH_PATTERN,
    n_classes="[1-9][0-9]*",
    q="[1-9][0-9]*",
    pe="[1-9][0-9]*",
    epochs="[1-9][0-9]*",
    answer=alternatives(vocab.ANSWERS),
    variant=alternatives(
        [v["name"] for v in config["paper002"]["ablation"]["variants"]]
    ),
    run=FEDMD_RUN.pattern,
    encoder=alternatives(D.RKNN["encoders"]) or "NO_ENCODER",
    s="[1-9][0-9]*",
    teacher=TEACHER_RUN.pattern,
    mech="none|(" + alternatives(NOISY) + f")-eps{EPS}",
    cmech="none|("
    + alternatives([m for m in vocab.CENTRAL_MECHANISMS if m != "none"])
    + f")-eps{EPS}",
    lmech="(" + alternatives(vocab.LOCAL_MECHANISMS) + f")-eps{EPS}",


def check_roles():
    """Every rule plays a declared role in the threat model (pipelib.stages), and every registered table
    and figure has its rule, or nothing runs."""
    problems = rule_roles([r.name for r in workflow.rules])
    if problems:
        roles = "dealer, party, teachers, curator, owners, public, server, federation, baseline, audit, report"
        raise WorkflowError(f"{'; '.join(problems)}: add it with its role ({roles})")
    # a table or figure registered after report.smk made the views' rules would have no rule
    late = sorted(set(VIEWS) - {r.name for r in workflow.rules})
    if late:
        raise WorkflowError(
            f"tables or figures registered after workflow/rules/report.smk was read: {', '.join(late)}: "
            "include the rule file that registers them before report.smk"
        )


# no-op starts skip the parses (beside the Snakefile: keyed by content, one cache serves every --directory)
provenance.use_disk_cache(
    Path(workflow.basedir) / ".snakemake" / "pipelib" / "code-modules.json"
)


def code(script, also=()):
    """params.code of every rule: a digest of workflow/scripts/<script> and of the pipelib modules it
    imports (transitively; ``also``: those it imports by name, a view's module). Snakemake's code trigger
    sees only the script; with this param, editing a pipelib module re-runs exactly the rules whose
    scripts use it (the params trigger).
    """
    return code_digest(
        Path(workflow.basedir) / "workflow" / "scripts" / script, also=tuple(also)
    )


def view_outputs(view):
    """A table's CSV (and its further files), or a figure's PNG, SVG and data CSV; the first in the report."""
    first = res(f"figures/{view.name}.png") if view.figure else res(f"{view.name}.csv")
    if view.caption:
        first = report(
            first,
            caption=f"../report/{view.caption}",
            category=view.category,
            subcategory=view.subcategory,
        )
    if view.figure:
        return {
            "png": first,
            "svg": res(f"figures/{view.name}.svg"),
            "data": res(f"figures/{view.name}.csv"),
        }
    return {"csv": first, **{k: res(v) for k, v in view.outputs.items()}}


def view_log(view, kind):
    """logs/<rule>.log of a table, logs/figures/<name>.log of a figure (benchmarks/ alike)."""
    ext = "log" if kind == "logs" else "tsv"
    where = f"figures/{view.name}" if view.figure else view.rule
    return res(f"{kind}/{where}.{ext}")


RAW_VIEW = Path(".snakemake/pipelib/raw")


def raw_inputs(wildcards):
    """The raw files a dataset's ingest reads, seen through links under .snakemake/pipelib/raw/ that
    point into the data root: the input paths stay the same wherever the data root is, so a
    byte-identical copy elsewhere re-runs nothing (the ingest's params hold the files' content digest,
    and a damaged file stops the run before any job). Marked ancient: new modification times of the same
    bytes re-run nothing either. A clear error names the missing files (download off).
    """
    spec = raw.dataset(wildcards.dataset)
    if config["download"] and spec.torchvision:
        return [
            ancient(str(D.DATA_ROOT / rel)) for rel in spec.files()
        ]  # made by rule download
    links = []
    for rel, path in raw.raw_files(wildcards.dataset, D.DATA_ROOT).items():
        link = RAW_VIEW / wildcards.dataset / rel.split("/", 1)[1]
        link = link.with_name(
            Path(path).name
        )  # a LEAF shard may be stored uncompressed
        target = str(Path(path).resolve())
        if not link.is_symlink() or os.readlink(link) != target:
            link.parent.mkdir(parents=True, exist_ok=True)
            tmp = link.with_name(f".{link.name}.tmp")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(target)
            tmp.replace(link)
        links.append(ancient(str(link)))
    return links


MD5_CACHE = raw.Md5Cache(".snakemake/pipelib/md5-cache.json")


def raw_content(dataset):
    """The content digest of a dataset's raw files (md5 of each, checked against the known sums)."""
    if (
        config["download"]
        and raw.dataset(dataset).torchvision
        and not (D.DATA_ROOT / raw.dataset(dataset).folder).is_dir()
    ):
        return "to be downloaded"
    try:
        digest = raw.content_digest(
            dataset, D.DATA_ROOT, verify=config["verify_checksums"], cache=MD5_CACHE
        )
    except (raw.ChecksumError, raw.MissingDataError) as err:
        raise WorkflowError(
            f"{err}\nNo job was started; the results already computed are untouched."
        ) from None
    MD5_CACHE.save()
    return digest


def check_devices():
    """A device setting this machine cannot honour fails before any job (and before any output is lost)."""
    wanted = [
        f"{section}.device"
        for section in ("fedmd", "rknn")
        if config[section]["device"] == "cuda"
    ]
    if wanted:
        import torch

        if not torch.cuda.is_available():
            raise WorkflowError(
                f"{', '.join(wanted)} = cuda, but torch sees no CUDA GPU on this machine; "
                "set it to auto or cpu. No job was started."
            )


RUN_START = [0.0]


def summarize_run():
    """After a successful run: which tables and pages it wrote, with their headline numbers."""
    from pipelib.report.pages import run_summary

    print(
        run_summary(D.RESULTS, RUN_START[0], f"docs/reproduction/{config['preset']}"),
        file=sys.stderr,
    )


def guard_inputs(jobs):
    """Before the first job, so before Snakemake deletes any old output: stop, naming each file and its
    rebuild command, if an existing input of a job about to run is damaged (pipelib.integrity); else
    return the run record (how this results folder is made) for announce_plan to write.
    """
    cs = workflow.config_settings
    record = integrity.run_record(
        workflow.main_snakefile,
        os.getcwd(),
        D.RESULTS,
        cs.configfiles or [],
        cs.config_args or [],
        [*D.all_targets(), *D.result_files()],
    )
    io = [(list(map(str, j.input)), list(map(str, j.output))) for j in jobs]
    # with verify_checksums off no md5 was checked: read the raw files of the ingests about to run
    raw_reads = (
        []
        if config["verify_checksums"]
        else [i for j in jobs if j.rule.name == "ingest" for i in j.input]
    )
    ds = workflow.dag_settings  # a forced re-run re-hashes every input it reads
    forced = bool(ds.forceall or ds.forcetargets or ds.forcerun)
    damaged = integrity.preflight(
        integrity.unproduced_inputs(io, D.RESULTS) | set(map(str, raw_reads)),
        rehash=forced,
    )
    if damaged:
        # a run started with --directory runs this from that folder; its hints must carry --directory
        elsewhere = workflow.overwrite_workdir is not None
        raise WorkflowError(
            integrity.stop_message(damaged, record, elsewhere=elsewhere)
        )
    return record


def announce_plan():
    """Before the first job: the planned compute per training stage with its estimated time on this machine,
    a warning when --cores exceeds the machine's cores, a stop (nothing started) when a run without a GPU
    would take longer than max_cpu_hours, then this run's lock on the results folder (pipelib.runlock).
    """
    import time

    from pipelib import plan, runlock

    RUN_START[0] = time.time()
    needed = list(workflow.dag.needrun_jobs())
    record = guard_inputs(needed)
    jobs = [(job.rule.name, dict(job.wildcards), job.threads) for job in needed]
    cores = int(workflow.resource_settings.cores or 1)
    machine = os.cpu_count() or 1
    if cores > machine:
        print(
            f"pipelib: --cores {cores} but this machine has {machine} CPU cores: jobs will share them "
            f"(use --cores {machine} or --cores all)",
            file=sys.stderr,
        )
    p = plan.make_plan(
        jobs, {**config, "scenarios": SCENARIOS}, D.RESULTS, min(cores, machine)
    )
    if p.stages:
        print(
            f"pipelib: planned training of this run (preset {config['preset']}, results in {D.RESULTS}/; "
            f"{p.hardware}):\n{p.table()}",
            file=sys.stderr,
        )
    if plan.cpu_too_long(p, config["max_cpu_hours"]):
        raise WorkflowError(plan.stop_message(p, config))
    try:  # one run per results folder, whatever its targets (held until this process exits)
        runlock.hold(D.RESULTS)
    except runlock.FolderInUse as e:
        raise WorkflowError(str(e)) from None
    # the run goes ahead: record how this results folder is made (pipelib verify reads it)
    integrity.write_run_record(D.RESULTS, record)


# GPUs a training job of each method asks for (the resource `gpu`), unless its device is cpu
TRAIN_GPUS = 0 if D.FEDMD["device"] == "cpu" else 1
DPSGD_GPUS = 0 if D.DPSGD["device"] == "cpu" else 1
RKNN_GPUS = 0 if D.RKNN["device"] == "cpu" else 1
LDPDL_GPUS = 0 if D.LDPDL["device"] == "cpu" else 1
LDPFL_GPUS = 0 if D.LDPFL["device"] == "cpu" else 1


def report_description():
    """The HTML report's first page: the papers' claims and Table 2 of this preset (pipelib.report.pages.
    report_front_page), written under .snakemake/pipelib/report/ when Snakemake makes a report; other runs
    (jobs re-read this file) keep the static description."""
    if "--report" not in sys.argv:
        return os.path.join(workflow.basedir, "workflow/report/workflow.rst")
    from pipelib.report.pages import report_front_page
    from pipelib.io import atomic_path

    path = Path(f".snakemake/pipelib/report/{config['preset']}.rst").resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(report_front_page(D.RESULTS, config["preset"]))
    return str(path)
