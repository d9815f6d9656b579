# Config validation, wildcard constraints and input functions shared by all rules.
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from pipelib import ingest as raw
from pipelib.config import ConfigError, scenario_seed, validate

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


def raw_inputs(wildcards):
    """The raw files a dataset's ingest reads; a clear error if they are missing (download off)."""
    spec = raw.dataset(wildcards.dataset)
    if config["download"] and spec.torchvision:
        return [str(DATA_ROOT / rel) for rel in spec.files()]  # made by rule download
    return [str(p) for p in raw.raw_files(wildcards.dataset, DATA_ROOT).values()]


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
    return [*ingest_targets(), "results/partitions.csv", "results/privacy_ledger.csv"]
