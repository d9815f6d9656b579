# Config validation, wildcard constraints, code digests and the path helpers every rules file uses.
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from pipelib import vocab
from pipelib.boundary import rule_roles
from pipelib.config import ConfigError, scenario_seed, validate
from pipelib.data import ingest as raw
from pipelib.provenance import code_digest
from pipelib.train.models import ARCH_PATTERN

try:
    validate(config)
except ConfigError as err:
    raise WorkflowError(str(err)) from None

DATA_ROOT = Path(config["data_root"])
SCENARIOS = config["scenarios"]
FEDMD = config["fedmd"]
TABLE2 = config["table2"]
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


def check_roles():
    """Every rule plays a declared role in the threat model (pipelib.boundary.ROLES), or nothing runs."""
    problems = rule_roles([r.name for r in workflow.rules])
    if problems:
        raise WorkflowError(
            "; ".join(problems)
            + ": add it with its role (dealer, party, curator, public, "
            "server, federation, baseline, report)"
        )


def code(script):
    """params.code of every rule: a digest of workflow/scripts/<script> and of the pipelib modules it
    imports (transitively). Snakemake's code trigger sees only the script; with this param, editing a
    pipelib module re-runs exactly the rules whose scripts use it (the params trigger).
    """
    return code_digest(Path(workflow.basedir) / "workflow" / "scripts" / script)


def raw_inputs(wildcards):
    """The raw files a dataset's ingest reads; a clear error if they are missing (download off).

    They are marked ancient: their content is verified by checksum, so a re-copied data root (new
    mtimes, same bytes) must not re-run the whole chain. After replacing raw files, `--forcerun ingest`.
    """
    spec = raw.dataset(wildcards.dataset)
    if config["download"] and spec.torchvision:
        return [
            ancient(str(DATA_ROOT / rel)) for rel in spec.files()
        ]  # made by rule download
    return [
        ancient(str(p)) for p in raw.raw_files(wildcards.dataset, DATA_ROOT).values()
    ]


def ingested(dataset):
    return {split: f"results/data/{dataset}/{split}.parquet" for split in vocab.SPLITS}


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
    return f"results/partitions/{scenario}"


def party_table(scenario, party):
    return f"{partition_dir(scenario)}/party-{party}.parquet"


def public_inputs(wildcards):
    """The scenario's public pool (a table of the public rows only, with pixels): all the server's
    jobs read of the public data, never an ingested table that may also hold private records.
    """
    return {"public": f"{partition_dir(wildcards.scenario)}/public.parquet"}


def sample_dir(scenario, sampling, k):
    return f"results/samples/{scenario}/{sampling}-k{k}"


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
            targets.append(f"results/data/{name}/class_counts.csv")
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


def all_targets():
    return [
        *ingest_targets(),
        "results/partitions.csv",
        "results/privacy_ledger.csv",
        "results/table2.csv",
        "results/table_rknn.csv",
        "results/compare.csv",
        f"docs/reproduction/{config['preset']}/table2.md",
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


def pretrained(scenario, arch):
    return f"results/pretrain/{SCENARIOS[scenario]['public']}/{arch}-c{n_outputs(scenario)}.pt"


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
            pretrained(scenario, arch) for arch in sorted(set(party_archs(scenario)))
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
        if k not in ("pretrain", "centralized", "runtime")
    }


def table2_rows():
    """(dataset label, run) of every FedMD row of results/table2.csv."""
    rows = []
    for label, spec in TABLE2.items():
        rows.append((label, "np"))
        rows += [(label, f"nfdp-{spec['sampling']}-k{k}") for k in spec["k"]]
        rows += [(label, f"ldp-{spec['sampling']}-k{k}") for k in spec.get("ldp_k", [])]
    return rows


def fedmd_dir(label, run):
    return f"results/fedmd/{TABLE2[label]['scenario']}/{FEDMD['answer']}/{run}"


def centralized_runs():
    """(dataset label, arch, result dir) of every centralized baseline Table 2 needs."""
    return [
        (label, arch, f"results/centralized/{spec['scenario']}/{arch}")
        for label, spec in TABLE2.items()
        for arch in sorted(set(party_archs(spec["scenario"])))
    ]


# ------------------------------------------------------------------ representations (reverse k-NN)
RKNN_GPUS = 0 if RKNN["device"] == "cpu" else 1


def represent_dir(scenario, encoder):
    return f"results/represent/{scenario}/{encoder}"


def encoder_model(wildcards):
    """The fitted encoder a stage needs ([] for HOG, which has no parameters)."""
    if RKNN["encoders"][wildcards.encoder]["kind"] == "hog":
        return []
    return [f"{represent_dir(wildcards.scenario, wildcards.encoder)}/encoder.pt"]


# -------------------------------------------------------------------------- the distillation stage
def rknn_teacher(spec):
    encoder, s, k = re.fullmatch(r"rknn-(.+)-s(\d+)-k(\d+)", spec).groups()
    return encoder, s, k


def rknn_party_inputs(wc):
    """What a party's reverse k-NN teacher reads besides its own table: its own embeddings, the queries."""
    encoder, s, _ = rknn_teacher(wc.teacher)
    d = represent_dir(wc.scenario, encoder)
    return {
        "embeddings_npy": f"{d}/party-{wc.party}.npy",
        "centers_npy": f"{d}/s{s}/centers.npy",
    }


def rknn_label_inputs(wc):
    """What the server's labeling reads besides the aggregate: the public samples' cluster ids."""
    encoder, s, _ = rknn_teacher(wc.teacher)
    return {"assign_path": f"{represent_dir(wc.scenario, encoder)}/s{s}/assign.parquet"}


# Per teacher kind: its party inputs, its label inputs, and the config section of its student.
TEACHERS = {"rknn": (rknn_party_inputs, rknn_label_inputs, RKNN)}


def teacher_kind(wc):
    return TEACHERS[wc.teacher.split("-", 1)[0]]


def distill_dir(scenario, teacher, mech=None):
    d = f"results/distill/{scenario}/{teacher}"
    return d if mech is None else f"{d}/{mech}"


def mechanism_dir(row):
    return (
        "none"
        if row["mechanism"] == "none"
        else f"{row['mechanism']}-eps{float(row['epsilon'])!r}"
    )


def rknn_rows():
    """(config row, result dir) of every row of results/table_rknn.csv."""
    return [
        (
            row,
            distill_dir(
                row["scenario"],
                f"rknn-{row['encoder']}-s{row['s']}-k{row['k']}",
                mechanism_dir(row),
            ),
        )
        for row in RKNN["table"]
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
    """Every file in which privatizing jobs recorded the guarantees of their releases (for NFDP, the
    per-sample ledger that collects its parties' records)."""
    files = [f"{sample_dir(*key)}/ledger.csv" for key in nfdp_samples()]
    files += [f"{fedmd_dir(label, run)}/releases.json" for label, run in table2_rows()]
    for row, d in rknn_rows():
        local = is_local(mechanism_dir(row))
        names = (
            [f"release/party-{i}" for i in party_ids(row["scenario"])]
            if local
            else ["release/curated"]
        )
        files += [f"{d}/{n}.guarantee.json" for n in names]
    return list(dict.fromkeys(files))


def result_files():
    """Every result row file of every method the config runs."""
    files = [f"{fedmd_dir(label, run)}/result.json" for label, run in table2_rows()]
    files += [f"{d}/result.json" for _, _, d in centralized_runs()]
    files += [f"{d}/result.json" for _, d in rknn_rows()]
    return list(dict.fromkeys(files))
