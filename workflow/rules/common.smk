# Config validation, wildcard constraints and input functions shared by all rules.
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from pipelib import ingest as raw
from pipelib.config import ConfigError, scenario_seed, validate
from pipelib.provenance import code_digest

try:
    validate(config)
except ConfigError as err:
    raise WorkflowError(str(err)) from None

DATA_ROOT = Path(config["data_root"])
SCENARIOS = config["scenarios"]


wildcard_constraints:
    dataset="|".join(raw.DATASETS),
    split="train|test",
    scenario="|".join(map(re.escape, SCENARIOS)),
    sampling="with_replacement|without_replacement",
    k="[1-9][0-9]*",
    party="0|[1-9][0-9]*",


def code(script):
    """params.code of every rule: a digest of workflow/scripts/<script> and of the pipelib modules it
    imports (transitively). Snakemake's code trigger sees only the script; with this param, editing a
    pipelib module re-runs exactly the rules whose scripts use it (the params trigger)."""
    return code_digest(Path(workflow.basedir) / "workflow" / "scripts" / script)


def raw_inputs(wildcards):
    """The raw files a dataset's ingest reads; a clear error if they are missing (download off).

    They are marked ancient: their content is verified by checksum, so a re-copied data root (new
    mtimes, same bytes) must not re-run the whole chain. After replacing raw files, `--forcerun ingest`.
    """
    spec = raw.dataset(wildcards.dataset)
    if config["download"] and spec.torchvision:
        return [ancient(str(DATA_ROOT / rel)) for rel in spec.files()]  # made by rule download
    return [ancient(str(p)) for p in raw.raw_files(wildcards.dataset, DATA_ROOT).values()]


def ingested(dataset):
    return {split: f"results/data/{dataset}/{split}.parquet" for split in raw.SPLITS}


def scenario_inputs(wildcards):
    sc = SCENARIOS[wildcards.scenario]
    private, public = ingested(sc["private"]), ingested(sc["public"])
    return {"private_train": private["train"], "private_test": private["test"], "public_train": public["train"]}


def party_ids(scenario):
    return range(SCENARIOS[scenario]["parties"])


def partition_params(wildcards):
    """Only the keys that decide the partition, so that changing k re-runs no partition."""
    return {k: v for k, v in SCENARIOS[wildcards.scenario].items() if k != "nfdp"}


def sample_dir(scenario, sampling, k):
    return f"results/samples/{scenario}/{sampling}-k{k}"


def nfdp_samples():
    """(scenario, sampling, k) for every NFDP sample the config asks for."""
    return [(name, sampling, k) for name, sc in SCENARIOS.items() if "nfdp" in sc
            for sampling in sc["nfdp"]["sampling"] for k in sc["nfdp"]["k"]]


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
            print(f"pipelib: skipping dataset {name!r}: {DATA_ROOT / raw.dataset(name).folder} is absent "
                  f"and no scenario uses it", file=sys.stderr)
    return targets


def all_targets():
    return [*ingest_targets(), "results/partitions.csv", "results/privacy_ledger.csv", "results/table2.csv",
            "results/table_rknn.csv"]


# ---------------------------------------------------------------------------- training stages
from pipelib.models import ARCH_PATTERN

FEDMD = config["fedmd"]
TABLE2 = config["table2"]
TRAIN_GPUS = 0 if FEDMD["device"] == "cpu" else 1


wildcard_constraints:
    arch=ARCH_PATTERN,
    n_classes="[1-9][0-9]*",
    answer="logits|softmax|argmax",
    method="np|(nfdp|ldp)-(with|without)_replacement-k[1-9][0-9]*",


def n_outputs(scenario):
    """Public classes + the private task's classes (FedMD's shared output layer)."""
    sc = SCENARIOS[scenario]
    return raw.dataset(sc["public"]).classes + len(config["tasks"][sc["task"]]["classes"])


def party_archs(scenario):
    archs = FEDMD["architectures"]
    return [archs[i % len(archs)] for i in party_ids(scenario)]


def pretrained(scenario, arch):
    return f"results/pretrain/{SCENARIOS[scenario]['public']}/{arch}-c{n_outputs(scenario)}.pt"


def parse_method(method):
    """'np' -> ('np', None, None); 'nfdp-with_replacement-k16' -> ('nfdp', 'with_replacement', 16)."""
    if method == "np":
        return "np", None, None
    kind, sampling, k = method.split("-")
    return kind, sampling, int(k[1:])


def fedmd_inputs(wildcards):
    """Party i's private input is its NFDP sample (nfdp) or all its records (np, ldp); nothing else."""
    scenario, sc = wildcards.scenario, SCENARIOS[wildcards.scenario]
    kind, sampling, k = parse_method(wildcards.method)
    if kind == "nfdp":
        parties = [f"{sample_dir(scenario, sampling, k)}/party-{i}.parquet" for i in party_ids(scenario)]
    else:
        parties = [f"results/partitions/{scenario}/party-{i}.parquet" for i in party_ids(scenario)]
    inputs = {
        "parties": parties,
        "models": [pretrained(scenario, arch) for arch in sorted(set(party_archs(scenario)))],
        "public_index": f"results/partitions/{scenario}/public.parquet",
        "public_data": ingested(sc["public"])["train"],
        "test": f"results/partitions/{scenario}/test.parquet",
    }
    if kind != "np":  # nfdp: its own ledger; ldp: the ledger of the NFDP row it is calibrated to
        inputs["ledger"] = f"{sample_dir(scenario, sampling, k)}/ledger.csv"
    return inputs


def fedmd_params():
    """The FedMD knobs a row depends on (pre-training and centralized settings act through their own files)."""
    return {k: v for k, v in FEDMD.items() if k not in ("pretrain", "centralized", "runtime")}


def table2_rows():
    """(dataset label, method dir) of every FedMD row of results/table2.csv."""
    rows = []
    for label, spec in TABLE2.items():
        rows.append((label, "np"))
        rows += [(label, f"nfdp-{spec['sampling']}-k{k}") for k in spec["k"]]
        rows += [(label, f"ldp-{spec['sampling']}-k{k}") for k in spec.get("ldp_k", [])]
    return rows


def fedmd_dir(label, method):
    return f"results/fedmd/{TABLE2[label]['scenario']}/{FEDMD['answer']}/{method}"


def centralized_results():
    return [(label, arch, f"results/centralized/{spec['scenario']}/{arch}.json")
            for label, spec in TABLE2.items() for arch in sorted(set(party_archs(spec["scenario"])))]


# ---------------------------------------------------------------------- reverse k-NN labeling
RKNN = config["rknn"]
EPS = r"(0|[1-9][0-9]*)\.([0-9]*[1-9]|0)"  # canonical float text (repr): '0.1', '1.0', never '1' or '0.10'


wildcard_constraints:
    encoder="|".join(map(re.escape, RKNN["encoders"])) or "NO_ENCODER",
    s="[1-9][0-9]*",
    cmech=f"none|laplace-eps{EPS}",
    lmech=f"(rr|collision)-eps{EPS}",
    mech=f"none|(laplace|rr|collision)-eps{EPS}",


def mechanism_dir(row):
    return "none" if row["mechanism"] == "none" else f"{row['mechanism']}-eps{float(row['epsilon'])!r}"


def rknn_dir(scenario, encoder, s=None, k=None):
    d = f"results/rknn/{scenario}/{encoder}"
    return d if s is None else f"{d}/s{s}" if k is None else f"{d}/s{s}/k{k}"


def rknn_rows():
    return [(row, f"{rknn_dir(row['scenario'], row['encoder'], row['s'], row['k'])}/{mechanism_dir(row)}")
            for row in RKNN["table"]]


def encoder_model(wildcards):
    """The trained encoder a stage needs ([] for HOG, which has no parameters)."""
    if RKNN["encoders"][wildcards.encoder]["kind"] == "hog":
        return []
    return [f"{rknn_dir(wildcards.scenario, wildcards.encoder)}/encoder.pt"]


def public_inputs(wildcards):
    sc = SCENARIOS[wildcards.scenario]
    split = sc.get("public_rows", {"split": "train"})["split"]
    return {"public_index": f"results/partitions/{wildcards.scenario}/public.parquet",
            "public_data": ingested(sc["public"])[split]}
