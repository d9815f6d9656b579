"""pipelib.design: what a config asks the workflow to make, without starting Snakemake."""

from pathlib import Path

import pytest

from pipelib.config import load, validate
from pipelib.design import Design, DesignError

REPO = Path(__file__).resolve().parents[1]


class Wildcards(dict):
    """What Snakemake passes an input function: the wildcards by name and as attributes."""

    __getattr__ = dict.__getitem__


def design(*presets, **overrides) -> Design:
    config = load(REPO / "config.yaml", *[REPO / "presets" / f"{p}.yaml" for p in presets])
    return Design(validate({**config, **overrides}))


def test_table2_rows_and_their_inputs_are_paths_under_the_presets_results():
    d = design("tiny")
    assert d.RESULTS == "results/tiny" and d.res("table2.csv") == "results/tiny/table2.csv"
    rows = d.table2_rows()
    assert ("FEMNIST", "np") in rows and ("CIFAR-10", "ldp-with_replacement-k16") in rows
    wc = Wildcards(scenario="femnist_iid", answer="softmax", run="nfdp-with_replacement-k16")
    inputs = d.fedmd_inputs(wc)
    sample = "results/tiny/samples/femnist_iid/with_replacement-k16"
    assert inputs["parties"][0] == f"{sample}/party-0.parquet" and inputs["ledger"] == f"{sample}/ledger.csv"
    assert inputs["public"] == "results/tiny/partitions/femnist_iid/public.parquet"
    np_inputs = d.fedmd_inputs(Wildcards(scenario="femnist_iid", answer="softmax", run="np"))
    assert np_inputs["parties"][0] == "results/tiny/partitions/femnist_iid/party-0.parquet"
    assert "ledger" not in np_inputs  # FedMD-NP reads no sample


def test_a_pages_command_names_its_target_before_the_preset_file():
    """`--configfile` takes every path after it as a config file: the target goes first."""
    command = design("reduced").preset_command("results/reduced/table2.csv")
    assert command == ".venv/bin/snakemake --cores 2 results/reduced/table2.csv --configfile presets/reduced.yaml"
    assert design().preset_command("results/paper/table2.csv").endswith("--cores 2 results/paper/table2.csv")


def test_every_target_of_rule_all_is_named_once_and_the_claims_are_among_them():
    targets = design("tiny").all_targets()
    assert len(targets) == len(set(targets))
    assert {"results/tiny/claims.csv", "docs/reproduction/tiny/claims.md", "results/tiny/compare.csv"} <= set(targets)


def test_the_rules_namespace_holds_the_designs_methods_and_constants():
    d = design("tiny")
    names = d.exports()
    assert names["fedmd_inputs"] == d.fedmd_inputs and names["SCENARIOS"] is d.SCENARIOS
    assert "exports" not in names and not [n for n in names if n.startswith("_")]


def test_a_budget_on_a_pool_scenario_with_other_pretraining_epochs_is_refused():
    d = design("tiny")
    with pytest.raises(DesignError, match="pre-training epochs 7 on scenario 'rknn_mnist'"):
        d.pretrained("rknn_mnist", d.FEDMD["architectures"][0], 7)


def test_the_loop_ablation_rows_settings_and_inputs():
    """paper002.ablation (the tiny preset's): the first variant on every table2 dataset, the second on its own
    dataset with FedMD's stratified samples; settings without the keys that choose rows; pooled ceilings per
    architecture on the same samples."""
    d = design("tiny")
    entries = d.ablation_entries()
    runs = [(e["dataset"], e["variant"]) for e in entries if "variant" in e]
    assert runs == [("FEMNIST", "shared_adam"), ("CIFAR-10", "shared_adam"), ("CIFAR-10", "fedmd_code")]
    code = next(e for e in entries if e.get("variant") == "fedmd_code")
    assert code["settings"] == {
        "sampling": "stratified_with_replacement",
        "optimizers": "per_phase",
        "bn_momentum": 0.01,
    }
    settings = d.ablation_settings("fedmd_code")
    assert settings["optimizers"] == "per_phase" and settings["rounds"] == 2 and settings["public_per_round"] == 200
    assert not {"name", "sampling", "datasets", "k"} & set(settings)
    wc = Wildcards(scenario="cifar_iid", variant="fedmd_code", run="nfdp-with_replacement-k16")
    inputs = d.ablation_inputs(wc)
    stratified = "results/tiny/samples/cifar_iid/stratified_with_replacement-k16"
    assert inputs["parties"][0] == f"{stratified}/party-0.parquet" and inputs["ledger"] == f"{stratified}/ledger.csv"
    plain = d.ablation_inputs(Wildcards(scenario="cifar_iid", variant="shared_adam", run="nfdp-with_replacement-k16"))
    assert plain["parties"][0] == "results/tiny/samples/cifar_iid/with_replacement-k16/party-0.parquet"
    pooled = [e["path"] for e in entries if "pooled" in e and e["dataset"] == "CIFAR-10"]
    assert pooled == [  # one per draw its variants train on (shared_adam's and fedmd_code's)
        f"results/tiny/centralized_pooled/cifar_iid/{draw}-k16/pe1-e2/{arch}/result.json"
        for draw in ("with_replacement", "stratified_with_replacement")
        for arch in sorted(set(d.party_archs("cifar_iid")))
    ]


def test_an_ablation_variant_outside_the_ablations_rows_is_refused():
    from pipelib.config import ConfigError

    config = load(REPO / "config.yaml", REPO / "presets" / "tiny.yaml")
    config["paper002"]["ablation"]["variants"].append({"name": "shared_adam", "k": [60], "datasets": ["MNIST"]})
    with pytest.raises(ConfigError) as err:
        validate(config)
    text = str(err.value)
    assert "'shared_adam' named twice" in text and "[60] not in paper002.ablation.k [16]" in text
    assert "['MNIST'] not among the table2 datasets (FEMNIST, CIFAR-10)" in text
