# Config validation, wildcard constraints, code digests and the path helpers every rules file uses.
import os
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from pipelib import vocab
from pipelib.boundary import rule_roles
from pipelib.config import (
    ConfigError,
    audit_rows,
    audit_variant,
    base_scenario,
    dpsgd_pretrained,
    dpsgd_scenarios,
    fedmd_compare_runs,
    kept,
    ldpdl_compare_scenarios,
    ldpfl_compare_runs,
    ldpfl_dataset as ldpfl_dataset_of,
    ldpfl_settings,
    encoder_chain,
    party_variant,
    replicate,
    scenarios,
    selected,
    validate,
)
from pipelib.config import encoder_settings as resolved_encoder
from pipelib.data import ingest as raw
from pipelib import integrity
from pipelib.plan import check_sizes
from pipelib.provenance import code_digest
from pipelib.train.models import ARCH_PATTERN

try:
    validate(config)
    # k above a party's n and the like fail here, before any job (as in pipelib check-config)
    check_sizes({**config, "scenarios": scenarios(config)}, config["results_dir"])
    integrity.note_dry_run_lock(
        sys.argv
    )  # a dry run in a locked folder: a real run will be refused
except ConfigError as err:
    raise WorkflowError(str(err)) from None

DATA_ROOT = Path(config["data_root"])
RESULTS = Path(config["results_dir"]).as_posix()  # without a trailing slash
SCENARIOS = scenarios(
    config
)  # those run.scenarios keeps, and variants with other numbers of parties

FEDMD = config["fedmd"]
TABLE2 = selected(config, "table2")
RKNN = config["rknn"]
EPS = r"(0|[1-9][0-9]*)\.([0-9]*[1-9]|0)"  # canonical float text (repr): '0.1', '1.0', never '1' or '0.10'
NOISY = [m for m in vocab.MECHANISMS if m != "none"]


def alternatives(names):
    return "|".join(map(re.escape, names))


wildcard_constraints:
    dataset=alternatives(vocab.DATASETS),
    public=alternatives(vocab.DATASETS),
    split=alternatives(vocab.SPLITS),
    scenario=alternatives(SCENARIOS),
    sampling=alternatives(vocab.SAMPLINGS),
    k="[1-9][0-9]*",
    party="0|[1-9][0-9]*",
    arch=ARCH_PATTERN,
    n_classes="[1-9][0-9]*",
    q="[1-9][0-9]*",
    pe="[1-9][0-9]*",
    epochs="[1-9][0-9]*",
    answer=alternatives(vocab.ANSWERS),
    run="np|(nfdp|ldp)-(" + alternatives(vocab.SAMPLINGS) + ")-k[1-9][0-9]*",
    encoder=alternatives(RKNN["encoders"]) or "NO_ENCODER",
    s="[1-9][0-9]*",
    teacher="rknn-[a-z][a-z0-9_]*-s[1-9][0-9]*-k[1-9][0-9]*",
    mech="none|(" + alternatives(NOISY) + f")-eps{EPS}",
    cmech="none|("
    + alternatives([m for m in vocab.CENTRAL_MECHANISMS if m != "none"])
    + f")-eps{EPS}",
    lmech="(" + alternatives(vocab.LOCAL_MECHANISMS) + f")-eps{EPS}",


def seed_of(scenario):
    """A scenario's seed: its own, else the master seed (a variant has its base scenario's)."""
    return int(SCENARIOS[scenario].get("seed", config["seed"]))


def res(path):
    """A path under this preset's results folder (config key results_dir)."""
    return f"{RESULTS}/{path}"


def check_roles():
    """Every rule plays a declared role in the threat model (pipelib.boundary.ROLES), or nothing runs."""
    problems = rule_roles([r.name for r in workflow.rules])
    if problems:
        roles = "dealer, party, teachers, curator, owners, public, server, federation, baseline, audit, report"
        raise WorkflowError(f"{'; '.join(problems)}: add it with its role ({roles})")


def code(script):
    """params.code of every rule: a digest of workflow/scripts/<script> and of the pipelib modules it
    imports (transitively). Snakemake's code trigger sees only the script; with this param, editing a
    pipelib module re-runs exactly the rules whose scripts use it (the params trigger).
    """
    return code_digest(Path(workflow.basedir) / "workflow" / "scripts" / script)


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
            ancient(str(DATA_ROOT / rel)) for rel in spec.files()
        ]  # made by rule download
    links = []
    for rel, path in raw.raw_files(wildcards.dataset, DATA_ROOT).items():
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
        and not (DATA_ROOT / raw.dataset(dataset).folder).is_dir()
    ):
        return "to be downloaded"
    try:
        digest = raw.content_digest(
            dataset, DATA_ROOT, verify=config["verify_checksums"], cache=MD5_CACHE
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
        run_summary(RESULTS, RUN_START[0], f"docs/reproduction/{config['preset']}"),
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
        RESULTS,
        cs.configfiles or [],
        cs.config_args or [],
        [*all_targets(), *result_files()],
    )
    io = [(list(map(str, j.input)), list(map(str, j.output))) for j in jobs]
    damaged = integrity.preflight(integrity.unproduced_inputs(io, RESULTS))
    if damaged:
        # a run started with --directory runs this from that folder; its hints must carry --directory
        elsewhere = workflow.overwrite_workdir is not None
        raise WorkflowError(
            integrity.stop_message(damaged, record, elsewhere=elsewhere)
        )
    return record


def announce_plan():
    """Before the first job: the planned compute per training stage with its estimated time on this
    machine, a warning when --cores exceeds the machine's cores, and a stop (nothing started) when a
    run without a GPU would take longer than max_cpu_hours."""
    import time

    from pipelib import plan

    RUN_START[0] = time.time()
    needed = list(workflow.dag.needrun_jobs())
    record = guard_inputs(needed)
    jobs = [(job.rule.name, dict(job.wildcards)) for job in needed]
    cores = int(workflow.resource_settings.cores or 1)
    machine = os.cpu_count() or 1
    if cores > machine:
        print(
            f"pipelib: --cores {cores} but this machine has {machine} CPU cores: jobs will share them "
            f"(use --cores {machine} or --cores all)",
            file=sys.stderr,
        )
    p = plan.make_plan(
        jobs, {**config, "scenarios": SCENARIOS}, RESULTS, min(cores, machine)
    )
    if p.stages:
        print(
            f"pipelib: planned training of this run (preset {config['preset']}, results in {RESULTS}/; "
            f"{p.hardware}):\n{p.table()}",
            file=sys.stderr,
        )
    if plan.cpu_too_long(p, config["max_cpu_hours"]):
        raise WorkflowError(plan.stop_message(p, config))
    # the run goes ahead: record how this results folder is made (pipelib verify reads it)
    integrity.write_run_record(RESULTS, record)


def ingested(dataset):
    return {split: res(f"data/{dataset}/{split}.parquet") for split in vocab.SPLITS}


def scenario_inputs(wildcards):
    sc = SCENARIOS[wildcards.scenario]
    private, public = ingested(sc["private"]), ingested(sc["public"])
    return {
        "private_train": private["train"],
        "private_test": private["test"],
        "public_train": public["train"],
        "public_test": public["test"],
    }


def partition_params(wildcards):
    """Only the keys that decide the partition, so that changing k re-runs no partition."""
    return {k: v for k, v in SCENARIOS[wildcards.scenario].items() if k != "nfdp"}


def party_ids(scenario):
    return range(SCENARIOS[scenario]["parties"])


def partition_dir(scenario):
    return res(f"partitions/{scenario}")


def party_table(scenario, party):
    return f"{partition_dir(scenario)}/party-{party}.parquet"


def public_inputs(wildcards):
    """The scenario's public pool (a table of the public rows only, with pixels): all the server's
    jobs read of the public data, never an ingested table that may also hold private records.
    """
    return {"public": f"{partition_dir(wildcards.scenario)}/public.parquet"}


def sample_dir(scenario, sampling, k):
    return res(f"samples/{scenario}/{sampling}-k{k}")


def nfdp_samples():
    """(scenario, sampling, k) for every NFDP sample the config asks for."""
    return [
        (name, sampling, k)
        for name, sc in SCENARIOS.items()
        if "nfdp" in sc
        for sampling in sc["nfdp"]["sampling"]
        for k in sc["nfdp"]["k"]
    ]


def ingest_targets():
    """Datasets to ingest: those the scenarios use plus config['ingest'] (skipping absent optional ones)."""
    used = {sc[role] for sc in SCENARIOS.values() for role in ("public", "private")}
    wanted = list(dict.fromkeys([*sorted(used), *config["ingest"]]))
    targets = []
    for name in wanted:
        present = (DATA_ROOT / raw.dataset(name).folder).is_dir()
        if name in used or present or config["download"]:
            targets.append(res(f"data/{name}/class_counts.csv"))
        else:
            print(
                f"pipelib: skipping dataset {name!r}: {DATA_ROOT / raw.dataset(name).folder} is absent "
                f"and no scenario uses it",
                file=sys.stderr,
            )
    return targets


def preset_command(target):
    """The command that makes ``target`` with this config's preset (for the reproduction pages)."""
    preset = config["preset"]
    extra = "" if preset == "paper" else f" --configfile presets/{preset}.yaml"
    return f".venv/bin/snakemake --cores 2{extra} {target}"


PAGES = (
    "table2",
    "table_rknn",
    "headline",
    "claims",
    "headline_claims",
    "headline_paper001",
    "paper002",
    "paper003",
    "paper004",
    "paper001",
    "compare",
)
# Pages of their own command, not made by the default target (FedMD's budget ablation: hours of CPU at the paper's size)
EXTRA_PAGES = ("fedmd_budget",)


def all_targets():
    return [
        *ingest_targets(),
        res("partitions.csv"),
        res("privacy_ledger.csv"),
        res("table2.csv"),
        res("table_rknn.csv"),
        res("compare.csv"),
        res("claims.csv"),
        *[f"docs/reproduction/{config['preset']}/{page}.md" for page in PAGES],
        res("table3.csv"),
        res("table4.csv"),
        res("table5.csv"),
        *[res(f"figures/{name}.png") for name in FIGURES],
        *([res("table_ldpdl.csv")] if ldpdl_table_entries() else []),
        *[res(f"figures/{name}.png") for name in ldpdl_figure_names()],
        *ldpfl_targets(),
        res("audit.csv"),
        res("figures/audit.png"),
        *[res(f"figures/compare_{sc}.png") for sc in compare_scenarios()],
    ]


# ------------------------------------------- FedMD rows, pre-training and the centralized baseline
TRAIN_GPUS = 0 if FEDMD["device"] == "cpu" else 1


def n_outputs(scenario):
    """Public classes + the private task's classes (FedMD's shared output layer)."""
    sc = SCENARIOS[scenario]
    return raw.dataset(sc["public"]).classes + len(
        config["tasks"][sc["task"]]["classes"]
    )


def party_archs(scenario):
    archs = FEDMD["architectures"]
    return [archs[i % len(archs)] for i in party_ids(scenario)]


def pretrained(scenario, arch, epochs=None):
    """The shared initialization of ``arch`` for ``scenario``: trained on the public dataset's train
    split, or, where the public and private data are one dataset (papers 003 and 004's splits: the
    other rows of the public pool are private), on the scenario's public pool alone (pretrain_pool).
    ``epochs`` other than the preset's (FedMD's budget ablation): pretrain/<public>/e<epochs>/.
    """
    sc = SCENARIOS[scenario]
    epochs = None if epochs is None else int(epochs)  # a path's wildcard is text
    if sc["public"] == sc["private"]:
        if epochs not in (None, FEDMD["pretrain"]["epochs"]):
            raise WorkflowError(
                f"paper002.budget: pre-training epochs {epochs} on scenario {scenario!r}, whose public "
                "pool is a slice of its private dataset, is not supported (only the preset's "
                f"fedmd.pretrain.epochs = {FEDMD['pretrain']['epochs']})"
            )
        return res(f"pretrain_pool/{scenario}/{arch}-c{n_outputs(scenario)}.pt")
    variant = "" if epochs in (None, FEDMD["pretrain"]["epochs"]) else f"e{epochs}/"
    return res(f"pretrain/{sc['public']}/{variant}{arch}-c{n_outputs(scenario)}.pt")


def fedmd_inputs(wildcards):
    """Party i's private input is its NFDP sample (nfdp) or all its records (np, ldp); nothing else."""
    scenario = wildcards.scenario
    kind, sampling, k = (
        wildcards.run.split("-") if wildcards.run != "np" else ("np", None, None)
    )
    if kind == "nfdp":
        parties = [
            f"{sample_dir(scenario, sampling, k[1:])}/party-{i}.parquet"
            for i in party_ids(scenario)
        ]
    else:
        parties = [party_table(scenario, i) for i in party_ids(scenario)]
    inputs = {
        "parties": parties,
        "models": [
            pretrained(scenario, arch, dict(wildcards.items()).get("pe"))
            for arch in sorted(set(party_archs(scenario)))
        ],
        **public_inputs(wildcards),
        "test": f"{partition_dir(scenario)}/test.parquet",
    }
    if (
        kind != "np"
    ):  # nfdp: its own ledger; ldp: the ledger of the NFDP row it is calibrated to
        inputs["ledger"] = f"{sample_dir(scenario, sampling, k[1:])}/ledger.csv"
    return inputs


def fedmd_params():
    """The FedMD knobs a row depends on (pre-training and centralized settings act through their own files)."""
    return {
        k: v
        for k, v in FEDMD.items()
        if k not in ("pretrain", "centralized", "runtime", "compare")
    }


def table2_rows():
    """(dataset label, run) of every FedMD row of results/table2.csv."""
    rows = []
    for label, spec in TABLE2.items():
        rows.append((label, "np"))
        rows += [(label, f"nfdp-{spec['sampling']}-k{k}") for k in spec["k"]]
        rows += [(label, f"ldp-{spec['sampling']}-k{k}") for k in spec.get("ldp_k", [])]
    return rows


def fedmd_dir(label, run, repeat=0):
    scenario = replicate(TABLE2[label]["scenario"], repeat)
    return res(f"fedmd/{scenario}/{FEDMD['answer']}/{run}")


def table2_repeats():
    """(dataset label, run, repeat) of every repeat (table2.<label>.seeds > 1) of a Table 2 NP or NFDP row."""
    return [
        (label, run, i)
        for label, run in table2_rows()
        if not run.startswith("ldp-")
        for i in range(1, TABLE2[label].get("seeds", 1))
    ]


def centralized_runs():
    """(dataset label, arch, result dir) of every centralized baseline Table 2 needs."""
    return [
        (label, arch, res(f"centralized/{spec['scenario']}/{arch}"))
        for label, spec in TABLE2.items()
        for arch in sorted(set(party_archs(spec["scenario"])))
    ]


# ---------------------------------------------------------- DP-SGD (the central-DP baseline; dpsgd.smk)
DPSGD = config["dpsgd"]
DPSGD_GPUS = 0 if DPSGD["device"] == "cpu" else 1


def dpsgd_dirs():
    """The result folder of every DP-SGD run: per scenario of dpsgd.scenarios that runs, per epsilon."""
    return [
        res(f"dpsgd/{scenario}/{DPSGD['arch']}/eps{float(eps)!r}")
        for scenario in dpsgd_scenarios(config)
        for eps in DPSGD["epsilon"]
    ]


def dpsgd_inputs(wildcards):
    """Every party's records (pooled by the job) and the test set; the public pre-trained model where the
    scenario's public data is another dataset (else DP-SGD starts from scratch)."""
    scenario = wildcards.scenario
    out = {
        "parties": [party_table(scenario, i) for i in party_ids(scenario)],
        "test": res(f"partitions/{scenario}/test.parquet"),
    }
    if dpsgd_pretrained(config, scenario):
        out["model"] = pretrained(scenario, wildcards.arch)
    return out


# ------------------------------------------------------------------ representations (reverse k-NN)
RKNN_GPUS = 0 if RKNN["device"] == "cpu" else 1


def represent_dir(scenario, encoder):
    return res(f"represent/{scenario}/{encoder}")


def public_side(scenario):
    """Where a scenario's public-data stages (encoders, public embeddings, queries) live: an audited
    variant shares its base scenario's, since its public pool is the same (docs/audit.md).
    """
    return SCENARIOS[scenario].get("audit_of", scenario)


def encoder_models(scenario, encoder):
    """The fitted models an encoder's embeddings need: its chain's (a UMAP encoder's input first, then
    its own); HOG has none."""
    chain = encoder_chain(RKNN["encoders"], encoder)
    return [
        f"{represent_dir(scenario, e)}/encoder.pt"
        for e in chain
        if RKNN["encoders"][e]["kind"] != "hog"
    ]


def encoder_model(wildcards):
    """The fitted models embedding with ``wildcards.encoder`` reads."""
    return encoder_models(public_side(wildcards.scenario), wildcards.encoder)


def encoder_base_models(wildcards):
    """The fitted models of the encoder's input (a UMAP encoder reduces its input's embeddings)."""
    enc = RKNN["encoders"][wildcards.encoder]
    return encoder_models(wildcards.scenario, enc["input"]) if "input" in enc else []


def encoder_settings(wildcards):
    return resolved_encoder(RKNN["encoders"], wildcards.encoder)


# -------------------------------------------------------------------------- the distillation stage
def rknn_teacher(spec):
    encoder, s, k = re.fullmatch(r"rknn-(.+)-s(\d+)-k(\d+)", spec).groups()
    return encoder, s, k


def rknn_party_inputs(wc):
    """What a party's reverse k-NN teacher reads besides its own table: its own embeddings, the queries."""
    encoder, s, _ = rknn_teacher(wc.teacher)
    return {
        "embeddings_npy": f"{represent_dir(wc.scenario, encoder)}/party-{wc.party}.npy",
        "centers_npy": f"{represent_dir(public_side(wc.scenario), encoder)}/s{s}/centers.npy",
    }


def rknn_label_inputs(wc):
    """What the server's labeling reads besides the aggregate: the public samples' cluster ids."""
    encoder, s, _ = rknn_teacher(wc.teacher)
    return {
        "assign_path": f"{represent_dir(public_side(wc.scenario), encoder)}/s{s}/assign.parquet"
    }


# Per teacher kind: its party inputs, its label inputs, and the config section of its student.
TEACHERS = {"rknn": (rknn_party_inputs, rknn_label_inputs, RKNN)}


def teacher_kind(wc):
    return TEACHERS[wc.teacher.split("-", 1)[0]]


def distill_dir(scenario, teacher, mech=None):
    d = res(f"distill/{scenario}/{teacher}")
    return d if mech is None else f"{d}/{mech}"


def mechanism_dir(row):
    return (
        "none"
        if row["mechanism"] == "none"
        else f"{row['mechanism']}-eps{float(row['epsilon'])!r}"
    )


def rknn_rows(part="table"):
    """(config row, result dir) of every row of results/table_rknn.csv (``part`` compare: of the rows
    on other methods' splits that run.scenarios keeps, for compare.csv only)."""
    rows = RKNN[part]
    if part == "compare":
        running = kept(config, [row["scenario"] for row in rows])
        rows = [row for row in rows if row["scenario"] in running]
    return [
        (
            row,
            distill_dir(
                row["scenario"],
                f"rknn-{row['encoder']}-s{row['s']}-k{row['k']}",
                mechanism_dir(row),
            ),
        )
        for row in rows
    ]


def is_local(mech):
    return mech.split("-eps")[0] in vocab.LOCAL_MECHANISMS


def aggregate_inputs(wc):
    """Privatized releases only: the parties' local releases, or the curator's noisy sum."""
    d = distill_dir(wc.scenario, wc.teacher, wc.mech)
    if is_local(wc.mech):
        names = [f"{d}/release/party-{i}" for i in party_ids(wc.scenario)]
    else:
        names = [f"{d}/release/curated"]
    ext = ".json" if is_local(wc.mech) else ".npy"
    return {
        "releases": [f"{n}{ext}" for n in names],
        "guarantees": [f"{n}.guarantee.json" for n in names],
    }


# ----------------------------------------------------------------------------------------- reports
def release_files():
    """Every file in which privatizing jobs recorded the guarantees of their releases: the NFDP samples
    of the config's scenarios and of every FedMD-NFDP row (their per-sample ledgers), FedMD-LDP rows'
    answers, every distillation row's local releases or curated sum, LDP-DL's answers and PATE's labels,
    and every LDP-FL run's per-client records."""
    samples = nfdp_samples()
    files = []
    for path in result_files():
        parts = Path(path).parent.relative_to(RESULTS).parts
        if parts[0] == "fedmd":
            _, scenario, _, run = parts
            if run.startswith("nfdp-"):
                _, sampling, k = run.split("-")
                samples.append((scenario, sampling, int(k[1:])))
            elif run.startswith("ldp-"):
                files.append(f"{Path(path).parent}/releases.json")
        elif parts[0] == "distill":
            _, scenario, _, mech = parts
            names = (
                [f"release/party-{i}" for i in party_ids(scenario)]
                if is_local(mech)
                else ["release/curated"]
            )
            files += [f"{Path(path).parent}/{n}.guarantee.json" for n in names]
        elif parts[0] == "ldpdl" and parts[2].startswith("pate-"):
            files.append(f"{Path(path).parent}/labels.guarantee.json")
        elif parts[0] == "ldpdl":
            files += ldpdl_release_guarantees(path)
        elif parts[0] in ("ldpfl", "dpsgd"):
            files.append(f"{Path(path).parent}/releases.json")
    files = [f"{sample_dir(*key)}/ledger.csv" for key in dict.fromkeys(samples)] + files
    return list(dict.fromkeys(files))


def result_files():
    """Every result row file of every method the config runs."""
    files = [f"{fedmd_dir(label, run)}/result.json" for label, run in table2_rows()]
    files += [
        fedmd_result(sc, FEDMD["answer"], run) for sc, run in fedmd_compare_runs(config)
    ]
    files += [f"{d}/result.json" for _, _, d in centralized_runs()]
    files += [
        f"{d}/result.json" for part in ("table", "compare") for _, d in rknn_rows(part)
    ]
    files += [e["path"] for e in paper_entries()]
    files += [e[k] for e in ldpdl_table_entries() for k in ("ldpdl", "pate")]
    files += [e["path"] for e in ldpdl_figure_entries()]
    files += ldpdl_compare_paths()
    files += ldpfl_paths()
    files += ldpfl_compare_paths()
    files += [f"{d}/result.json" for d in dpsgd_dirs()]
    return list(dict.fromkeys(files))


def compare_scenarios():
    """The defined scenarios whose result rows compare.csv holds (one figure each)."""
    found = [Path(p).relative_to(RESULTS).parts[1] for p in result_files()]
    return sorted({sc for sc in found if sc in config["scenarios"]})


# ------------------------------------------------- paper 002's Tables 3-5 and the papers' figures
P002, P003 = config["paper002"], config["paper003"]


def fedmd_result(scenario, answer, run):
    return res(f"fedmd/{scenario}/{answer}/{run}/result.json")


def nfdp_run(sampling, k):
    return f"nfdp-{sampling}-k{k}"


def table3_entries():
    """Answer types x number of parties, at paper002.k (a scenario variant for another N)."""
    return [
        {
            "dataset": label,
            "parties": n,
            "answer": answer,
            "path": fedmd_result(
                party_variant(config, spec["scenario"], n),
                answer,
                nfdp_run(spec["sampling"], P002["k"]),
            ),
        }
        for label, spec in TABLE2.items()
        for answer in P002["table3"]["answers"]
        for n in P002["table3"]["parties"]
    ]


def table4_entries():
    """IID (the table2 scenario) against non-IID, at paper002.k."""
    answer, run = P002["table4"]["answer"], lambda spec: nfdp_run(
        spec["sampling"], P002["k"]
    )
    entries = [
        {
            "dataset": label,
            "setting": "IID",
            "path": fedmd_result(spec["scenario"], answer, run(spec)),
        }
        for label, spec in TABLE2.items()
    ]
    entries += [
        {
            "dataset": label,
            "setting": "non-IID",
            "path": fedmd_result(scenario, answer, run(TABLE2[label])),
        }
        for label, scenario in P002["table4"]["noniid"].items()
        if label in TABLE2 and scenario in SCENARIOS
    ]
    return entries


def table5_entries():
    """Sampling with against without replacement, at the k of each dataset label."""
    answer = P002["table5"]["answer"]
    return [
        {
            "dataset": label,
            "sampling": sampling,
            "k": k,
            "path": fedmd_result(
                TABLE2[label]["scenario"], answer, nfdp_run(sampling, k)
            ),
        }
        for label, k in P002["table5"]["k"].items()
        if label in TABLE2
        for sampling in vocab.SAMPLINGS
    ]


def figure2d_entries():
    """Accuracy against the number of parties, at paper002.k."""
    answer = P002["figure2d"]["answer"]
    return [
        {
            "dataset": label,
            "path": fedmd_result(
                party_variant(config, spec["scenario"], n),
                answer,
                nfdp_run(spec["sampling"], P002["k"]),
            ),
        }
        for label, spec in TABLE2.items()
        for n in P002["figure2d"]["parties"]
    ]


def budget_result(scenario, run, rounds, queries, epochs):
    """A FedMD row at a distillation budget and pre-training: the Table 2 run where they are the preset's."""
    if (rounds, queries, epochs) == (
        FEDMD["rounds"],
        FEDMD["public_per_round"],
        FEDMD["pretrain"]["epochs"],
    ):
        return fedmd_result(scenario, FEDMD["answer"], run)
    point = f"R{rounds}-q{queries}-pe{epochs}"
    return res(f"fedmd_budget/{scenario}/{FEDMD['answer']}/{point}/{run}/result.json")


def budget_entries():
    """FedMD-NP and FedMD-NFDP at paper002.budget.k on every table2 dataset, at every budget point."""
    k = P002["budget"]["k"]
    return [
        {
            "dataset": label,
            "run": run,
            "rounds": rounds,
            "public_per_round": queries,
            "pretrain_epochs": epochs,
            "path": budget_result(spec["scenario"], run, rounds, queries, epochs),
        }
        for label, spec in TABLE2.items()
        for rounds, queries, epochs in P002["budget"]["points"]
        for run in ("np", nfdp_run(spec["sampling"], k))
    ]


def rknn_result(scenario, encoder, s, k, mech):
    return f"{distill_dir(scenario, f'rknn-{encoder}-s{s}-k{k}', mech)}/result.json"


def p003_sweep_entries():
    """Paper 003 Figure 2(a)-(c): s at k = 1, and k at s = at_s; central Laplace at the row's epsilon."""
    entries = []
    for label, v in P003["figure2abc"].items():
        if v["scenario"] not in SCENARIOS:
            continue
        mech = f"laplace-eps{float(v['epsilon'])!r}"
        entries += [
            {
                "dataset": label,
                "sweep": "s",
                "path": rknn_result(v["scenario"], v["encoder"], s, 1, mech),
            }
            for s in v["s"]
        ]
        entries += [
            {
                "dataset": label,
                "sweep": "k",
                "path": rknn_result(v["scenario"], v["encoder"], v["at_s"], k, mech),
            }
            for k in v["k"]
        ]
    return entries


def p003_local_entries():
    """Paper 003 Figure 2(d): local mechanisms at s = 10, k = 1 over epsilon."""
    d = P003["figure2d"]
    return [
        {
            "dataset": label,
            "path": rknn_result(
                v["scenario"], v["encoder"], 10, 1, f"{m}-eps{float(e)!r}"
            ),
        }
        for label, v in d["datasets"].items()
        if v["scenario"] in SCENARIOS
        for m in d["mechanisms"]
        for e in d["epsilon"]
    ]


def paper_entries():
    return (
        table3_entries()
        + table4_entries()
        + table5_entries()
        + figure2d_entries()
        + p003_sweep_entries()
        + p003_local_entries()
    )


def figure_outputs(name):
    return {
        kind: res(f"figures/{name}.{ext}")
        for kind, ext in (("png", "png"), ("svg", "svg"), ("data", "csv"))
    }


def paper_figures():
    """The figures this run selection has rows for (the closed forms always)."""
    has = {
        "p002_privacy_vs_parties": True,
        "p002_accuracy_vs_parties": bool(figure2d_entries()),
        "p002_rounds": any(P002["k"] in spec["k"] for spec in TABLE2.values()),
        "p002_privacy_vs_k": True,
        "p003_queries_and_neighbours": bool(p003_sweep_entries()),
        "p003_local_dp": bool(p003_local_entries()),
    }
    return [name for name, ok in has.items() if ok]


FIGURES = paper_figures()


# ------------------------------------------------- LDP-DL and PATE (paper 004; rules in ldpdl.smk)
LDPDL = config["ldpdl"]
LDPDL_GPUS = 0 if LDPDL["device"] == "cpu" else 1


def owner_design(owners=None):
    """The owners of LDP-DL runs: ``L<owners>`` (overlapping owners, ldpdl.owners) or ``parties``
    (the scenario's parties; ldpdl.owners = parties, compare and audit runs)."""
    o = LDPDL["owners"]
    if o == "parties":
        return "parties"
    return f"L{o['count'] if owners is None else owners}"


def pate_design():
    """PATE's teachers: ``T<n>`` disjoint shards of the pool (ldpdl.pate.teachers) or ``parties``."""
    t = LDPDL["pate"]["teachers"]
    return "parties" if t == "parties" else f"T{t}"


def ldpdl_dir(scenario, mech, eps, nq, qs, design):
    return res(f"ldpdl/{scenario}/{mech}-eps{float(eps)!r}-q{nq}-{design}-{qs}")


def ldpdl_shape(qs):
    """(queries per iteration, iterations) of a run.  Without AQS the queries do not depend on the
    student, so the S x T random queries are drawn at once and one student is trained on them: the
    same final student as T rounds of S (each retrains from scratch on all queries so far).
    """
    s, t = LDPDL["queries_per_iteration"], LDPDL["iterations"]
    return (s, t) if qs == "aqs" else (s * t, 1)


def ldpdl_result(scenario, mech, eps, nq, qs, design=None):
    """A run's result row: its last iteration's student."""
    d = ldpdl_dir(scenario, mech, eps, nq, qs, design or owner_design())
    return f"{d}/iter-{ldpdl_shape(qs)[1]}/result.json"


def ldpdl_release_guarantees(result):
    """The release records behind a run's result row (every iteration up to the row's)."""
    run, last = Path(result).parent.parent, int(Path(result).parent.name.split("-")[1])
    return [f"{run}/iter-{t}/answers.guarantee.json" for t in range(1, last + 1)]


def pate_result(scenario, eps, design=None):
    return res(
        f"ldpdl/{scenario}/pate-eps{float(eps)!r}-{design or pate_design()}/result.json"
    )


def teachers_files(scenario, design):
    """The owners' teachers of a design (for the owners' and the curator's jobs only) and their summary."""
    d = res(f"ldpdl/{scenario}/teachers-{design}")
    return {"teachers": f"{d}/teachers.npz", "teachers_info": f"{d}/teachers.json"}


def teacher_settings(scenario):
    """The teachers' settings for a scenario: its private dataset's encoder and the ridge penalty."""
    t = LDPDL["teacher"]
    encoder = t["by_dataset"].get(SCENARIOS[scenario]["private"], t["encoder"])
    return {"encoder": encoder, "ridge": t["ridge"]}


def teacher_records(design):
    """Records per owner of an ``L<n>`` design (0: the design's shards say)."""
    return LDPDL["owners"]["records"] if design.startswith("L") else 0


def run_dir(wc):
    return ldpdl_dir(wc.scenario, wc.ldmech, wc.eps, wc.nq, wc.qs, wc.design)


def queries_of(wc, t):
    """The queries of iteration t: the plan's first draw, then each student's choice of the next."""
    d = run_dir(wc)
    return f"{d}/iter-1/queries.npy" if t == 1 else f"{d}/iter-{t - 1}/next.npy"


def design_owners(scenario, design):
    """How many owners a design has."""
    return SCENARIOS[scenario]["parties"] if design == "parties" else int(design[1:])


def ldpdl_table_entries():
    """Paper 004 Table 1: per dataset and epsilon, LDP-DL (the table's mechanism, AQS) and PATE."""
    t = LDPDL["table"]
    return [
        {
            "dataset": label,
            "epsilon": float(e),
            "ldpdl": ldpdl_result(sc, t["mechanism"], e, LDPDL["per_query"], "aqs"),
            "pate": pate_result(sc, e),
        }
        for label, sc in t["datasets"].items()
        if sc in SCENARIOS
        for e in t["epsilon"]
    ]


def owners_sweep_result(sc, mech, eps, qs, n):
    """Figures 4-6 (c): the run with L = n owners (overlapping owners), or on the scenario dealt to n
    parties (ldpdl.owners = parties)."""
    if LDPDL["owners"] == "parties":
        return ldpdl_result(
            party_variant(config, sc, n), mech, eps, LDPDL["per_query"], qs, "parties"
        )
    return ldpdl_result(sc, mech, eps, LDPDL["per_query"], qs, owner_design(n))


def ldpdl_figure_entries():
    """Figures 4-6: accuracy against epsilon, N_Q and L; every mechanism with and without AQS."""
    f = LDPDL["figures"]
    out = []
    for label, sc in f["datasets"].items():
        if sc not in SCENARIOS:
            continue
        for mech in f["mechanisms"]:
            for qs in ("aqs", "random"):
                common = {"dataset": label, "mechanism": mech, "aqs": qs == "aqs"}
                out += [
                    {
                        **common,
                        "sweep": "epsilon",
                        "x": float(e),
                        "path": ldpdl_result(sc, mech, e, LDPDL["per_query"], qs),
                    }
                    for e in f["epsilon"]
                ]
                out += [
                    {
                        **common,
                        "sweep": "per_query",
                        "x": n,
                        "path": ldpdl_result(sc, mech, f["at_epsilon"], n, qs),
                    }
                    for n in f["per_query"]
                ]
                out += [
                    {
                        **common,
                        "sweep": "owners",
                        "x": n,
                        "path": owners_sweep_result(sc, mech, f["at_epsilon"], qs, n),
                    }
                    for n in f["owners"]
                ]
    return out


def ldpdl_compare_paths():
    """LDP-DL (the table's mechanism, AQS) and PATE on other methods' splits: compare.csv's rows only."""
    c = LDPDL["compare"]
    return [
        path
        for sc in ldpdl_compare_scenarios(config)
        for e in c["epsilon"]
        for path in (
            ldpdl_result(
                sc, LDPDL["table"]["mechanism"], e, c["per_query"], "aqs", "parties"
            ),
            pate_result(sc, e, "parties"),
        )
    ]


def ldpdl_figure_names():
    return [
        f"p004_{slug(label)}"
        for label in dict.fromkeys(e["dataset"] for e in ldpdl_figure_entries())
    ]


def slug(label):
    return re.sub(r"[^a-z0-9]+", "", label.lower())


# ------------------------------------------------- LDP-FL (paper 001; rules in ldpfl.smk)
LDPFL = config["ldpfl"]
LDPFL_GPUS = 0 if LDPFL["device"] == "cpu" else 1


def ldpfl_dir(scenario, run, fraction, rounds):
    return res(f"ldpfl/{scenario}/{run}/f{float(fraction)!r}-m{int(rounds)}")


def ldpfl_run(epsilon, radius):
    """A run's name: none (noise-free), twopoint-eps<e>-adaptive, or twopoint-eps<e>-c<c>-r<r>."""
    if epsilon is None:
        return "none"
    if radius == "adaptive":
        return f"twopoint-eps{float(epsilon)!r}-adaptive"
    return f"twopoint-eps{float(epsilon)!r}-c{float(radius[0])!r}-r{float(radius[1])!r}"


def ldpfl_dataset(scenario):
    """The ldpfl.datasets entry of a scenario or of one of its variants (pipelib.config)."""
    return ldpfl_dataset_of(config, scenario)


def ldpfl_entries():
    """Every LDP-FL run the config asks for: Table 1 (noise-free, and fixed vs adaptive range at each
    epsilon), Figure 3 (clients), Figure 4 (fraction of clients; rounds come from the runs' histories),
    Figure 5 (epsilon; radius of a fixed range)."""
    out = []
    for label, d in LDPFL["datasets"].items():
        sc = d["scenario"]
        if sc not in SCENARIOS:
            continue
        fixed = tuple(d["fixed_range"])
        shown = "adaptive" if d["figure_range"] == "adaptive" else fixed
        at = d["figure_epsilon"]

        def add(
            artifact, eps, radius, scenario=sc, fraction=LDPFL["fraction"], **extra
        ):
            run = ldpfl_run(eps, radius)
            path = f"{ldpfl_dir(scenario, run, fraction, d['rounds'])}/result.json"
            out.append(
                {"artifact": artifact, "dataset": label, "run": run, "path": path}
                | extra
            )

        add("table", None, None, epsilon=None, range="none")
        for eps in LDPFL["table_epsilon"]:
            add("table", eps, fixed, epsilon=float(eps), range="fixed")
            add("table", eps, "adaptive", epsilon=float(eps), range="adaptive")
        for n in d["clients"]:
            variant = party_variant(config, sc, n)
            add("clients", at, shown, scenario=variant, x=n, private=True)
            add("clients", None, None, scenario=variant, x=n, private=False)
        for fr in LDPFL["fractions"]:
            add("fraction", at, shown, fraction=fr, x=float(fr), private=True)
        for eps in d["epsilons"]:
            add("epsilon", eps, shown, x=float(eps), private=True)
        if LDPFL["radius"]["dataset"] == label:
            for r in LDPFL["radius"]["r"]:
                add(
                    "radius",
                    LDPFL["radius"]["epsilon"],
                    (0.0, r),
                    x=float(r),
                    private=True,
                )
    return out


def ldpfl_compare_paths():
    """LDP-FL on other methods' splits (noise-free and adaptive range): compare.csv's rows only."""
    return [
        f"{ldpfl_dir(sc, ldpfl_run(eps, 'adaptive'), LDPFL['fraction'], ldpfl_dataset(sc)[1]['rounds'])}/result.json"
        for sc, eps in ldpfl_compare_runs(config)
    ]


def ldpfl_paths(artifact=None):
    entries = [e for e in ldpfl_entries() if artifact in (None, e["artifact"])]
    return list(dict.fromkeys(e["path"] for e in entries))


# Figure name -> the entries it draws on (the first also names its rounds tables)
FIGURE_P001 = {
    "clients": ("clients",),  # Figure 3
    "fraction_rounds": ("fraction",),  # Figure 4
    "epsilon": ("epsilon", "radius"),  # Figure 5 (a)-(d)
}


def p001_paths(name):
    """The result rows a paper-001 figure draws on."""
    return list(dict.fromkeys(p for a in FIGURE_P001[name] for p in ldpfl_paths(a)))


def ldpfl_targets():
    """Table 1 and the figures that have runs under this config."""
    kinds = {e["artifact"] for e in ldpfl_entries()}
    return [
        *([res("table_ldpfl.csv")] if "table" in kinds else []),
        *[
            res(f"figures/p001_{name}.png")
            for name, arts in FIGURE_P001.items()
            if kinds & set(arts)
        ],
    ]


def page_figures():
    """Every figure the reproduction pages show."""
    kinds = {e["artifact"] for e in ldpfl_entries()}
    p001 = [f"p001_{n}" for n, arts in FIGURE_P001.items() if kinds & set(arts)]
    return FIGURES + ldpdl_figure_names() + p001


def page_inputs(wildcards):
    """What one reproduction page is generated from: its tables and its figures' copies beside it (each
    page needs only its own paper's outputs, so it can be built as soon as they are)."""
    page = wildcards.page
    tables = {
        "table2": ["table2"],
        "table_rknn": ["table_rknn"],
        "headline": ["table2", "table_rknn"],
        "paper002": ["table3", "table4", "table5"],
        "fedmd_budget": ["fedmd_budget"],
        "paper003": [],
        "paper004": ["table_ldpdl"] if ldpdl_table_entries() else [],
        "paper001": ["table_ldpfl"] if ldpfl_paths("table") else [],
        "headline_paper001": ["table_ldpfl"] if ldpfl_paths("table") else [],
        "compare": ["compare", "audit"],
        "claims": ["claims"],
        "headline_claims": ["claims"],
    }[page]
    prefix = {
        "paper002": "p002_",
        "paper003": "p003_",
        "paper004": "p004_",
        "paper001": "p001_",
    }
    if page == "compare":
        names = [f"compare_{sc}" for sc in compare_scenarios()] + ["audit"]
    elif page == "fedmd_budget":
        names = ["p002_budget"] if budget_entries() else []
    else:
        names = [
            n for n in page_figures() if page in prefix and n.startswith(prefix[page])
        ]
    figures = [
        f"docs/reproduction/{config['preset']}/figures/{name}.png" for name in names
    ]
    # paper 004's page also states what its figures show, generated from their data
    data = [res(f"figures/{n}.csv") for n in names] if page == "paper004" else []
    return {
        **{t: res(f"{t}.csv") for t in tables},
        "figures": figures,
        "figure_data": data,
    }


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
        tmp.write_text(report_front_page(RESULTS, config["preset"]))
    return str(path)


def claim_sources():
    """The tables and figure data this run makes that the papers' claims are checked on (name -> path)."""
    tables = ["table2", "table3", "table4", "table5", "table_rknn"]
    tables += ["table_ldpdl"] if ldpdl_table_entries() else []
    tables += ["table_ldpfl"] if ldpfl_paths("table") else []
    figures = [*FIGURES, *ldpdl_figure_names()]
    figures += [Path(p).stem for p in ldpfl_targets() if "/figures/" in p]
    return {
        **{t: res(f"{t}.csv") for t in tables},
        **{f: res(f"figures/{f}.csv") for f in dict.fromkeys(figures)},
    }


# ------------------------------------------------------------------------------------------ the audit
AUDIT = config["audit"]
AUDIT_SCENARIOS = [name for name, sc in SCENARIOS.items() if "audit" in sc]


def audit_rknn_entries():
    """Per audited reverse k-NN row: its audited scenario, teacher, mechanism and the audit's output."""
    out = []
    for row in audit_rows(config, "rknn"):
        scenario = audit_variant(config, row["scenario"], row["mechanism"])
        teacher, mech = f"rknn-{row['encoder']}-s{row['s']}-k{row['k']}", mechanism_dir(
            row
        )
        out.append(
            {
                "scenario": scenario,
                "teacher": teacher,
                "mech": mech,
                "path": res(f"audit/distill/{scenario}/{teacher}/{mech}/audit.json"),
            }
        )
    return out


def audit_fedmd_entries():
    """Per audited FedMD row: its audited scenario, answer, run and the audit's output."""
    out = []
    for row in audit_rows(config, "fedmd"):
        scenario = audit_variant(config, row["scenario"], row["run"])
        d = f"{scenario}/{row['answer']}/{row['run']}"
        out.append(
            {
                "scenario": scenario,
                "answer": row["answer"],
                "run": row["run"],
                "path": res(f"audit/fedmd/{d}/audit.json"),
            }
        )
    return out


def audit_fedmd_inputs(wc):
    """The auditor reads the canary list, the parties' final models and party 0's sample ledger."""
    inputs = {
        "canaries": f"{partition_dir(wc.scenario)}/canaries.parquet",
        "models": res(f"fedmd/{wc.scenario}/{wc.answer}/{wc.run}/models.pt"),
        "ledger": [],
    }
    if wc.run.startswith("nfdp-"):
        _, sampling, k = wc.run.split("-")
        inputs["ledger"] = [
            f"{sample_dir(wc.scenario, sampling, k[1:])}/party-0.ledger.json"
        ]
    return inputs


def audit_dpsgd_entries():
    """Per audited DP-SGD run: its audited scenario (replace canaries), epsilon and the audit's output."""
    out = []
    for row in audit_rows(config, "dpsgd"):
        scenario = audit_variant(config, row["scenario"], "dpsgd")
        d = f"{scenario}/{DPSGD['arch']}/eps{float(row['epsilon'])!r}"
        out.append({"scenario": scenario, "path": res(f"audit/dpsgd/{d}/audit.json")})
    return out


def audit_ldpfl_entries():
    """Per audited LDP-FL run: its audited scenario (client 0 holds the canaries), run folder and output."""
    out = []
    for row in audit_rows(config, "ldpfl"):
        scenario = audit_variant(config, row["scenario"], row["run"])
        run = Path(
            ldpfl_dir(
                scenario,
                row["run"],
                LDPFL["fraction"],
                ldpfl_dataset(row["scenario"])[1]["rounds"],
            )
        )
        d = run.relative_to(res("ldpfl"))
        out.append(
            {
                "scenario": scenario,
                "run": str(run),
                "path": res(f"audit/ldpfl/{d}/audit.json"),
            }
        )
    return out


def audit_ldpdl_entries():
    """Per audited LDP-DL (with AQS) or PATE run: its audited scenario (owner 0 holds the canaries), the
    run's folder name and the audit's output."""
    out = []
    for row in audit_rows(config, "ldpdl"):
        scenario = audit_variant(config, row["scenario"], row["mechanism"])
        eps = float(row["epsilon"])
        run = (  # audits run on the scenario's parties: owner 0 is party 0, which holds the canaries
            f"pate-eps{eps!r}-parties"
            if row["mechanism"] == "pate"
            else f"{row['mechanism']}-eps{eps!r}-q{LDPDL['per_query']}-parties-aqs"
        )
        out.append(
            {
                "scenario": scenario,
                "path": res(f"audit/ldpdl/{scenario}/{run}/audit.json"),
            }
        )
    return out


def audit_ldpdl_inputs(wc):
    """The auditor reads the canary list, the run's final student and its claim: owner 0's composed
    ledger (LDP-DL's owners.csv of the last iteration) or the curator's guarantee (PATE).
    """
    d = res(f"ldpdl/{wc.scenario}/{wc.run}")
    if wc.run.startswith("pate-"):
        last, claim = d, f"{d}/labels.guarantee.json"
    else:
        last = f"{d}/iter-{ldpdl_shape('aqs')[1]}"
        claim = f"{last}/owners.csv"
    return {
        "canaries": f"{partition_dir(wc.scenario)}/canaries.parquet",
        "model": f"{last}/student.pt",
        "claim": claim,
    }


def audit_validation_paths():
    return [
        res(f"audit/validation/{name}/audit.json")
        for name in ["none"] + [f"rr-eps{float(e)!r}" for e in AUDIT["validation"]]
    ]


def audit_distill_inputs(wc):
    """The auditor reads the canary list, the release and its guarantee, the votes of every record but
    the canaries (the base scenario's parties' exact answers), and the public queries and encoder (to
    place each canary as a party would)."""
    encoder, s, _ = rknn_teacher(wc.teacher)
    d = distill_dir(wc.scenario, wc.teacher, wc.mech)
    release = f"{d}/release/party-0" if is_local(wc.mech) else f"{d}/release/curated"
    base = distill_dir(public_side(wc.scenario), wc.teacher)
    parties = [0] if is_local(wc.mech) else party_ids(wc.scenario)
    return {
        "canaries": f"{partition_dir(wc.scenario)}/canaries.parquet",
        "known": [f"{base}/answers/party-{p}.npy" for p in parties],
        "release": f"{release}.json" if is_local(wc.mech) else f"{release}.npy",
        "guarantee": f"{release}.guarantee.json",
        "centers": f"{represent_dir(public_side(wc.scenario), encoder)}/s{s}/centers.npy",
        "model": encoder_models(public_side(wc.scenario), encoder),
    }
