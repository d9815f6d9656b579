"""Config validation: the shipped config and presets are valid; bad values name key and allowed values."""

import copy
from pathlib import Path

import pytest

from pipelib.config import ConfigError, load, validate

REPO = Path(__file__).resolve().parents[1]
PRESETS = sorted((REPO / "presets").glob("*.yaml"))


@pytest.fixture
def config():
    return load(REPO / "config.yaml")


def test_shipped_config_is_valid(config):
    validate(config)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_presets_are_valid(preset):
    validate(load(REPO / "config.yaml", preset))


def bad(config, edit):
    c = copy.deepcopy(config)
    edit(c)
    with pytest.raises(ConfigError) as err:
        validate(c)
    return str(err.value)


def test_unknown_top_level_key(config):
    msg = bad(config, lambda c: c.update(sede=1))
    assert "unknown key 'sede' in (top level)" in msg and "allowed keys:" in msg and "seed" in msg


def test_unknown_scenario_key(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"].update(partys=3))
    assert "unknown key 'partys' in scenarios.cifar_iid" in msg and "parties" in msg


def test_wrong_type(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"].update(parties="ten"))
    assert "scenarios.cifar_iid.parties = 'ten' has the wrong type; expected integer" in msg


def test_unknown_scheme_lists_allowed(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"].update(scheme="iidd"))
    assert "scenarios.cifar_iid.scheme = 'iidd' is not allowed" in msg
    assert "allowed values: iid, writer, subclass, dirichlet" in msg


def test_unknown_dataset_lists_allowed(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"].update(private="svhn"))
    assert "scenarios.cifar_iid.private = 'svhn' is not allowed" in msg and "cifar100" in msg


def test_unknown_sampling(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"]["nfdp"].update(sampling=["poisson"]))
    assert "scenarios.cifar_iid.nfdp.sampling.0 = 'poisson'" in msg and "with_replacement" in msg


def test_k_must_be_positive(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"]["nfdp"].update(k=[0]))
    assert "scenarios.cifar_iid.nfdp.k.0" in msg


def test_dirichlet_needs_alpha(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"].update(scheme="dirichlet"))
    assert "scenarios.cifar_iid" in msg and "'alpha' is a required property" in msg


def test_undefined_task(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"].update(task="nope"))
    assert "scenarios.cifar_iid.task = 'nope' is not defined" in msg and "cifar100_fine6" in msg


def test_writer_scheme_needs_writer_ids(config):
    msg = bad(config, lambda c: c["scenarios"]["cifar_iid"].update(scheme="writer"))
    assert "needs a dataset with writer ids" in msg


def test_task_column_must_exist(config):
    msg = bad(config, lambda c: c["scenarios"]["femnist_iid"].update(task="cifar100_coarse6"))
    assert "task column 'coarse_label' does not exist in dataset 'femnist_letters'" in msg


def test_scenario_name_pattern(config):
    msg = bad(config, lambda c: c["scenarios"].update({"bad-name": c["scenarios"]["cifar_iid"]}))
    assert "'bad-name'" in msg


def test_merge_is_deep(tmp_path):
    over = tmp_path / "o.yaml"
    over.write_text("scenarios:\n  cifar_iid: {parties: 2}\n")
    c = load(REPO / "config.yaml", over)
    assert c["scenarios"]["cifar_iid"]["parties"] == 2 and c["scenarios"]["cifar_iid"]["scheme"] == "iid"


def test_ldpdl_asks_no_more_owners_than_a_scenario_has(config):
    msg = bad(config, lambda c: c["ldpdl"]["figures"].update(per_query=[10, 20000]))
    assert "ldpdl.figures.datasets.MNIST" in msg and "N_Q up to 20000" in msg and "L = 10000 owners" in msg
    msg = bad(config, lambda c: c["ldpdl"]["figures"].update(owners=[10]))
    assert "ldpdl.per_query = 30 owners per query" in msg
    # the disjoint variant: the scenario's parties are the owners
    msg = bad(config, lambda c: c["ldpdl"].update(owners="parties") or c["ldpdl"]["figures"].update(per_query=[500]))
    assert "N_Q up to 500" in msg and "has 100 parties (owners)" in msg
    msg = bad(config, lambda c: c["ldpdl"].update(owners={"count": 10000}))
    assert "ldpdl.owners" in msg


def test_ldpdl_queries_must_fit_the_public_pool(config):
    msg = bad(config, lambda c: c["ldpdl"].update(queries_per_iteration=2000))
    assert "need 10000 public samples; scenario 'ldpdl_mnist' has 6000" in msg


def test_ldpdl_compare_runs_need_a_defined_scenario_with_enough_parties(config):
    msg = bad(config, lambda c: c["ldpdl"]["compare"].update(per_query=11))
    assert "ldpdl.compare.per_query: 11 owners per query, but scenario 'femnist_iid' has 10 parties" in msg
    msg = bad(config, lambda c: c["ldpdl"]["compare"].update(scenarios=["femnist_iid", "nope"]))
    assert "ldpdl.compare.scenarios.1: scenario 'nope' is not defined" in msg
    msg = bad(
        config,
        lambda c: (
            c["ldpdl"]["compare"].update(scenarios=["femnist_iid", "ldpdl_mnist"], per_query=2)
            or c["ldpdl"].update(queries_per_iteration=2000)
        ),
    )
    assert "ldpdl.compare.scenarios.1: 5 iterations x 2000 queries need 10000 public samples" in msg
    msg = bad(
        config, lambda c: c["audit"]["ldpdl"].append({"scenario": "femnist_iid", "mechanism": "pm", "epsilon": 8.0})
    )
    assert "audit.ldpdl.2: the audited LDP-DL run asks ldpdl.per_query = 30 owners per query" in msg


def test_ldpfl_compare_runs_borrow_a_defined_dataset_entry(config):
    from pipelib.config import ldpfl_compare_runs
    from pipelib.settings import ldpfl_dataset

    assert ldpfl_dataset(config, "cifar_iid")[0] == "CIFAR-10"  # its model, lr and rounds
    assert ("femnist_iid", None) in ldpfl_compare_runs(config) and ("femnist_iid", 8.0) in ldpfl_compare_runs(config)
    n = len(config["ldpfl"]["compare"])
    msg = bad(config, lambda c: c["ldpfl"]["compare"].append({"scenario": "nope", "like": "SVHN", "epsilon": [1.0]}))
    assert f"ldpfl.compare.{n}: scenario 'nope' is not defined" in msg
    assert f"ldpfl.compare.{n}.like = 'SVHN' is not one of ldpfl.datasets" in msg
    msg = bad(
        config, lambda c: c["ldpfl"]["compare"].append({"scenario": "ldpfl_mnist", "like": "MNIST", "epsilon": [1.0]})
    )
    assert "scenario 'ldpfl_mnist' already has an ldpfl.datasets entry" in msg
    msg = bad(
        config, lambda c: c["ldpfl"]["compare"].append({"scenario": "cifar_iid", "like": "MNIST", "epsilon": [1.0]})
    )
    assert f"ldpfl.compare.{n}: scenario 'cifar_iid' has an earlier ldpfl.compare entry" in msg


def test_fedmd_compare_runs_and_their_checks(config):
    from pipelib.config import fedmd_compare_runs

    runs = fedmd_compare_runs(config)
    assert ("rknn_mnist", "np") in runs and ("rknn_mnist", "nfdp-with_replacement-k16") in runs
    assert ("rknn_mnist", "ldp-with_replacement-k16") in runs
    assert ("ldpdl_cifar10", "nfdp-with_replacement-k300") in runs
    config["run"]["scenarios"] = [s for s in config["scenarios"] if s != "rknn_mnist"]
    assert all(sc != "rknn_mnist" for sc, _ in fedmd_compare_runs(config))  # run.scenarios leaves it out
    config["run"]["scenarios"] = "all"
    n = len(config["fedmd"]["compare"])
    entry = {"scenario": "ldpfl_mnist", "sampling": "with_replacement", "k": [16], "ldp_k": [16, 60]}
    msg = bad(config, lambda c: c["fedmd"]["compare"].append(entry))
    assert f"fedmd.compare.{n}: scenario 'ldpfl_mnist' has 0 public samples" in msg  # paper 001: no public data
    assert f"fedmd.compare.{n}.ldp_k: [60] are not in its k [16]" in msg
    msg = bad(
        config,
        lambda c: c["fedmd"]["compare"].append({"scenario": "rknn_mnist", "sampling": "with_replacement", "k": [16]}),
    )
    assert f"fedmd.compare.{n}: scenario 'rknn_mnist' has an earlier fedmd.compare entry" in msg
    msg = bad(
        config, lambda c: c["fedmd"]["compare"].append({"scenario": "nope", "sampling": "with_replacement", "k": [16]})
    )
    assert f"fedmd.compare.{n}: scenario 'nope' is not defined" in msg


def test_rknn_compare_rows_are_checked_as_table_rows(config):
    row = {"dataset": "x", "scenario": "ldpdl_cifar10", "encoder": "hog_digits", "s": 4, "k": 5, "mechanism": "none"}
    msg = bad(config, lambda c: c["rknn"]["compare"].append(row))
    n = len(config["rknn"]["compare"])
    assert f"rknn.compare.{n}: k=5 nearest queries of s=4 queries is impossible" in msg
    assert f"rknn.compare.{n}: encoder 'hog_digits' deskews digits" in msg


def test_ldpdl_mechanism_must_be_a_soft_label_sanitizer(config):
    msg = bad(config, lambda c: c["ldpdl"]["table"].update(mechanism="laplace"))
    assert "ldpdl.table.mechanism" in msg and "pm, duchi, laplacebox" in msg


def test_an_encoder_input_must_exist_and_not_loop(config):
    msg = bad(config, lambda c: c["rknn"]["encoders"]["umap_hog"].update(input="hogg"))
    assert "rknn.encoders.umap_hog.input = 'hogg' is not an encoder" in msg and "hog_digits" in msg

    def loop(c):
        c["rknn"]["encoders"]["hog_digits"] = {**c["rknn"]["encoders"]["umap_hog"], "input": "umap_digits"}

    assert "its inputs loop (hog_digits -> umap_digits -> hog_digits)" in bad(config, loop)


def test_deskewing_needs_grayscale_images(config):
    def colour(c):
        row = next(r for r in c["rknn"]["table"] if r["encoder"] == "umap_digits")
        c["rknn"]["table"].append({**row, "scenario": "rknn_cifar10"})

    msg = bad(config, colour)
    assert "deskews digits; scenario 'rknn_cifar10' has colour images (cifar10)" in msg


def test_audit_rows_name_a_scenario_that_runs_and_a_known_run(config):
    msg = bad(config, lambda c: c["audit"]["rknn"][0].update(scenario="nowhere"))
    assert "audit.rknn.0: scenario 'nowhere' is not defined" in msg
    msg = bad(config, lambda c: c["audit"]["rknn"][0].update(encoder="nope"))
    assert "audit.rknn.0: unknown encoder 'nope'" in msg
    msg = bad(config, lambda c: c["audit"]["fedmd"][0].update(run="ldp-with_replacement-k16"))
    assert "audit.fedmd.0.run" in msg


def test_audited_variants_follow_the_claims_adjacency(config):
    from pipelib.config import scenarios

    sc = scenarios(config)
    assert sc["rknn_mnist-canaries-replace"]["audit"] == {"canaries": 500, "adjacency": "replace"}
    assert sc["rknn_mnist-canaries-addremove"]["audit_of"] == "rknn_mnist"  # the no-noise row: no claim
    assert sc["femnist_iid-canaries-replace"]["parties"] == sc["femnist_iid"]["parties"]


def test_table2_seeds_make_repeat_scenarios_on_the_next_seeds(config):
    """table2.<label>.seeds = 3: the scenarios <scenario>-s1 and -s2, the same pool and parties on seed + 1
    and seed + 2, with NFDP samples for the row's sampling and k (the repeats run NP and NFDP rows)."""
    from pipelib.config import base_scenario, replicate, scenarios

    c = copy.deepcopy(config)
    spec = c["table2"]["CIFAR-10"]
    spec["seeds"] = 3
    validate(c)
    sc = scenarios(c)
    base = spec["scenario"]
    assert [replicate(base, i) for i in range(3)] == [base, f"{base}-s1", f"{base}-s2"]
    assert f"{base}-s3" not in sc and f"{base}-s1" in sc
    seed = sc[base].get("seed", c["seed"])
    assert [sc[f"{base}-s{i}"]["seed"] for i in (1, 2)] == [seed + 1, seed + 2]
    assert sc[f"{base}-s2"]["nfdp"] == {"sampling": [spec["sampling"]], "k": spec["k"]}
    assert sc[f"{base}-s1"]["parties"] == sc[base]["parties"] and base_scenario(c, f"{base}-s1") == base
    assert "seeds" in bad(config, lambda c: c["table2"]["CIFAR-10"].update(seeds=0))


@pytest.mark.parametrize(
    "edit,key",
    [
        (lambda c: c["ldpfl"]["datasets"]["MNIST"].update(fixed_range=[0.0, 0.0]), "ldpfl.datasets.MNIST.fixed_range"),
        (lambda c: c["ldpfl"]["datasets"]["MNIST"].update(fixed_range=[0.0, float("nan")]), "ldpfl.datasets.MNIST"),
        (lambda c: c["ldpfl"]["datasets"]["MNIST"].update(fixed_range=[float("inf"), 0.1]), "ldpfl.datasets.MNIST"),
        (lambda c: c["ldpfl"]["radius"].update(r=[0.1, float("inf")]), "ldpfl.radius.r"),
    ],
)
def test_an_ldpfl_box_must_be_finite_with_a_positive_radius(config, edit, key):
    """Eq. 2 divides by r: a zero, NaN or infinite box would release constants or lose the epsilon ratio."""
    msg = bad(config, edit)
    assert key in msg and "finite" in msg
