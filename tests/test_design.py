"""pipelib.design: what a config asks the workflow to make, without starting Snakemake."""

from pathlib import Path

import pytest

from pipelib.config import ConfigError, load, validate
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
    rows = d.fedmd.table2_rows()
    assert ("FEMNIST", "np") in rows and ("CIFAR-10", "ldp-with_replacement-k16") in rows
    wc = Wildcards(scenario="femnist_iid", answer="softmax", run="nfdp-with_replacement-k16")
    inputs = d.fedmd.inputs(wc)
    sample = "results/tiny/samples/femnist_iid/with_replacement-k16"
    assert inputs["parties"][0] == f"{sample}/party-0.parquet" and inputs["ledger"] == f"{sample}/ledger.csv"
    assert inputs["public"] == "results/tiny/partitions/femnist_iid/public.parquet"
    np_inputs = d.fedmd.inputs(Wildcards(scenario="femnist_iid", answer="softmax", run="np"))
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


def test_every_part_serves_registered_methods_and_owns_its_result_folders():
    """The parts (pipelib.design.PARTS) are attached to pipelib.stages methods by name; every method with a
    run record has one; every result file lies in a folder exactly one part owns."""
    from pipelib import stages
    from pipelib.design import PARTS

    d = design("tiny")
    served = {m for part in PARTS.values() for m in part.methods}
    assert served <= set(stages.METHODS)
    assert {name for name, m in stages.METHODS.items() if m.run is not None} <= served
    folders = [f for part in PARTS.values() for f in part.folders]
    assert len(folders) == len(set(folders))
    tops = {Path(f).relative_to(d.RESULTS).parts[0] for f in d.result_files()}
    assert tops <= set(folders) and tops == {"fedmd", "centralized", "distill", "ldpdl", "ldpfl", "dpsgd"}


def test_the_rules_read_the_design_by_visible_names_only():
    """No name is injected into the rules' namespace: common.smk names the shared helpers, and every
    D.<name> and D.<part>.<name> a rule file reads exists on the design of a tiny config."""
    import re

    d = design("tiny")
    assert not hasattr(d, "exports")
    common = (REPO / "workflow/rules/common.smk").read_text()
    assert "globals()" not in common
    text = "".join(p.read_text() for p in [REPO / "Snakefile", *sorted((REPO / "workflow/rules").glob("*.smk"))])
    used = set(re.findall(r"\bD\.(\w+)(?:\.(\w+))?", text))
    assert len(used) > 50
    for name, attr in used:
        owner = getattr(d, name)
        assert not attr or hasattr(owner, attr), f"D.{name}.{attr}"


def test_the_aggregates_gather_every_parts_share():
    """The default target holds every part's tables, figures and targets; the claims read every table
    and figure; the release records are the parts' ledgers and the records behind each result file."""
    d = design("tiny")
    targets = set(d.all_targets())
    assert {d.res(f"{t}.csv") for t in d.tables()} | set(d.audit.targets()) <= targets
    assert {d.res(f"figures/{f}.png") for f in d.figures()} <= targets
    assert set(d.claim_sources()) == set(d.tables()) | set(d.figures())
    releases = set(d.release_files())
    assert set(d.fedmd.ledgers()) <= releases
    ldp = next(f for f in d.fedmd.result_files() if "/ldp-" in f)
    assert ldp.replace("result.json", "releases.json") in releases
    assert not d.fedmd.releases(d.fedmd.result_files()[0])  # FedMD-NP releases nothing private


def test_the_distillation_part_reads_a_local_or_a_curated_release():
    d = design("tiny")
    local = next(f for f in d.distill.result_files() if "/rr-" in f)
    guarantees = d.distill.releases(local)
    parties = d.SCENARIOS[Path(local).parts[3]]["parties"]
    assert len(guarantees) == parties and guarantees[0].endswith("/release/party-0.guarantee.json")
    wc = Wildcards(scenario="rknn_mnist", teacher="rknn-hog-s20-k1", mech="laplace-eps1.0")
    assert d.distill.aggregate_inputs(wc)["releases"] == [
        "results/tiny/distill/rknn_mnist/rknn-hog-s20-k1/laplace-eps1.0/release/curated.npy"
    ]
    assert d.distill.tables() == ["table_rknn"] and d.distill.teacher_kind(wc) is d.distill.TEACHERS["rknn"]


def test_the_ldpdl_part_names_table_arms_iterations_and_their_releases():
    d = design("tiny")
    entry = d.ldpdl.table_entries()[0]
    assert entry["ldpdl"] == "results/tiny/ldpdl/ldpdl_mnist/pm-eps8.0-q2-L40-aqs/iter-2/result.json"
    assert entry["pate"] == "results/tiny/distill/ldpdl_mnist/pate-T8-q40/gnmax-eps8.0/result.json"
    assert d.ldpdl.releases(entry["ldpdl"]) == [
        f"results/tiny/ldpdl/ldpdl_mnist/pm-eps8.0-q2-L40-aqs/iter-{t}/answers.guarantee.json" for t in (1, 2)
    ]
    wc = Wildcards(scenario="ldpdl_mnist", ldmech="pm", eps="8.0", nq="2", qs="aqs", design="L40")
    assert d.ldpdl.queries_of(wc, 2) == "results/tiny/ldpdl/ldpdl_mnist/pm-eps8.0-q2-L40-aqs/iter-1/next.npy"
    assert d.ldpdl.figures() == ["p004_mnist"]
    assert "repeats" not in entry  # ldpdl.table.seeds unset: one run per arm


def test_ldpdl_table_seeds_add_each_arms_runs_on_the_repeat_scenarios():
    config = load(REPO / "config.yaml", REPO / "presets" / "tiny.yaml")
    config["ldpdl"]["table"]["seeds"] = {"MNIST": 2}
    d = Design(validate(config))
    entry = d.ldpdl.table_entries()[0]
    assert entry["repeats"] == {
        arm: [entry[arm].replace("/ldpdl_mnist/", "/ldpdl_mnist-s1/")] for arm in entry["repeats"]
    }
    assert set(entry["repeats"]) == {"ldpdl", "pate", "pate_own"} and "-s1" not in entry["ceiling"]
    assert set(d.ldpdl.table_files()) >= {p for paths in entry["repeats"].values() for p in paths}
    config["ldpdl"]["table"]["seed_arms"] = ["ldpdl", "pate"]  # PATE's own CNN teachers once
    assert set(Design(validate(config)).ldpdl.table_entries()[0]["repeats"]) == {"ldpdl", "pate"}
    seed = d.SCENARIOS["ldpdl_mnist"].get("seed", config["seed"])
    assert d.SCENARIOS["ldpdl_mnist-s1"]["seed"] == seed + 1 and "ldpdl_mnist-s2" not in d.SCENARIOS
    assert d.SCENARIOS["ldpdl_mnist-s1"]["replicate_of"] == "ldpdl_mnist"
    config["ldpdl"]["table"]["seeds"] = {"Fashion": 2}
    with pytest.raises(ConfigError, match="ldpdl.table.seeds.Fashion: no such dataset in ldpdl.table.datasets"):
        validate(config)


def test_the_ldpfl_part_makes_its_table_and_figures_from_its_entries():
    d = design("tiny")
    assert d.ldpfl.entries()[0]["path"] == "results/tiny/ldpfl/ldpfl_mnist/none/f1.0-m3/result.json"
    assert d.ldpfl.tables() == ["table_ldpfl"]
    assert d.ldpfl.figures() == ["p001_clients", "p001_fraction_rounds", "p001_epsilon"]
    assert all(f.endswith("/result.json") for f in d.ldpfl.result_files())


def test_the_dpsgd_and_audit_parts():
    d = design("tiny")
    assert d.dpsgd.dirs() == ["results/tiny/dpsgd/femnist_iid/cnn2-8-16-d0.2/eps4.0"]
    inputs = d.dpsgd.inputs(Wildcards(scenario="femnist_iid", arch="cnn2-8-16-d0.2"))
    assert len(inputs["parties"]) == d.SCENARIOS["femnist_iid"]["parties"] and "test" in inputs
    assert d.audit.targets() == ["results/tiny/audit.csv", "results/tiny/figures/audit.png"]
    np_audit = d.audit.fedmd_entries()[0]
    assert np_audit["path"] == "results/tiny/audit/fedmd/femnist_iid-canaries-addremove/softmax/np/audit.json"
    assert d.audit.validation_paths()[0] == "results/tiny/audit/validation/none/audit.json"


def test_a_budget_on_a_pool_scenario_with_other_pretraining_epochs_is_refused():
    d = design("tiny")
    with pytest.raises(DesignError, match="pre-training epochs 7 on scenario 'rknn_mnist'"):
        d.fedmd.pretrained("rknn_mnist", d.FEDMD["architectures"][0], 7)


def test_the_loop_ablation_rows_settings_and_inputs():
    """paper002.ablation (the tiny preset's): the first variant on every table2 dataset, the second on its own
    dataset with FedMD's stratified samples; settings without the keys that choose rows; pooled ceilings per
    architecture on the same samples."""
    d = design("tiny")
    entries = d.ablation.entries()
    runs = [(e["dataset"], e["variant"]) for e in entries if "variant" in e]
    assert runs == [("FEMNIST", "shared_adam"), ("CIFAR-10", "shared_adam"), ("CIFAR-10", "fedmd_code")]
    code = next(e for e in entries if e.get("variant") == "fedmd_code")
    assert code["settings"] == {
        "sampling": "stratified_with_replacement",
        "optimizers": "per_phase",
        "bn_momentum": 0.01,
    }
    settings = d.fedmd.settings(Wildcards(scenario="cifar_iid", variant="fedmd_code", run="np"))
    assert settings["optimizers"] == "per_phase" and settings["rounds"] == 2 and settings["public_per_round"] == 200
    assert not {"name", "sampling", "datasets", "k"} & set(settings)
    wc = Wildcards(scenario="cifar_iid", variant="fedmd_code", run="nfdp-with_replacement-k16")
    inputs = d.ablation.inputs(wc)
    stratified = "results/tiny/samples/cifar_iid/stratified_with_replacement-k16"
    assert inputs["parties"][0] == f"{stratified}/party-0.parquet" and inputs["ledger"] == f"{stratified}/ledger.csv"
    plain = d.ablation.inputs(Wildcards(scenario="cifar_iid", variant="shared_adam", run="nfdp-with_replacement-k16"))
    assert plain["parties"][0] == "results/tiny/samples/cifar_iid/with_replacement-k16/party-0.parquet"
    pooled = [e["path"] for e in entries if "pooled" in e and e["dataset"] == "CIFAR-10"]
    assert pooled == [  # one per draw its variants train on (shared_adam's and fedmd_code's)
        f"results/tiny/centralized_pooled/cifar_iid/{draw}-k16/pe1-e2/{arch}/result.json"
        for draw in ("with_replacement", "stratified_with_replacement")
        for arch in sorted(set(d.fedmd.party_archs("cifar_iid")))
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


def test_a_budget_point_sets_the_rules_settings_and_the_planned_work_alike(tmp_path):
    """pipelib.settings.fedmd_params is the one place a budget point or a loop variant overrides FedMD's settings:
    the rule's params (D.fedmd.settings) and the planned work (pipelib.work.fedmd) read the same values."""
    from pipelib import work
    from pipelib.config import scenarios

    d = design("tiny")
    wc = {"scenario": "cifar_iid", "answer": "logits", "rounds": "5", "q": "300", "pe": "1", "run": "np"}
    s = d.fedmd.settings(Wildcards(wc))
    assert (s["answer"], s["rounds"], s["public_per_round"]) == ("logits", 5, 300) and "pretrain" not in s
    sizes = work.Sizes({**d.config, "scenarios": scenarios(d.config)}, str(tmp_path))
    base = {**wc, "rounds": "1", "q": "300"}
    digest = s["digest_epochs"] * 300 * len(sizes.parties("cifar_iid")[0])  # one round's digest passes
    assert work.fedmd(wc, sizes).total - work.fedmd(base, sizes).total >= 4 * digest
    archs = d.fedmd.party_archs("cifar_iid")
    assert archs == [d.FEDMD["architectures"][i % len(d.FEDMD["architectures"])] for i in range(len(archs))]


def test_every_table_and_figure_the_design_asks_for_has_one_registered_view():
    """pipelib.report.registry.VIEWS: each table and figure of the tiny design is made by exactly one entry,
    whose inputs are files under the preset's results and whose arguments are plain data (Snakemake re-runs
    a job when they change only if it can store them)."""
    import json
    import re

    from pipelib.report.registry import VIEWS

    d = design("tiny")
    wanted = [f"{t}.csv" for t in d.tables()] + [f"figures/{f}.png" for f in d.figures()]
    wanted += ["partitions.csv", "privacy_ledger.csv", "compare.csv", "claims.csv", "audit.csv", "figures/audit.png"]
    wanted += [f"figures/compare_{sc}.png" for sc in d.compare_scenarios()]
    for target in wanted:
        made = []
        for view in VIEWS.values():
            path = f"figures/{view.name}.png" if view.figure else f"{view.name}.csv"
            m = re.fullmatch(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path)), target)
            if m:
                made.append((view, Wildcards(m.groupdict())))
        assert len(made) == 1, (target, [v.rule for v, _ in made])
        view, wc = made[0]
        files = [f for v in view.inputs(d, wc).values() for f in ([v] if isinstance(v, str) else v)]
        assert all(f.startswith("results/tiny/") for f in files), (view.rule, files)
        json.dumps(view.args(d, wc))  # plain data
    table2 = VIEWS["table2"].inputs(d, Wildcards())
    assert len(table2["results"]) == len(table2["rounds"]) == len(d.fedmd.table2_rows())
    assert VIEWS["figure_p001"].args(d, Wildcards(p001="epsilon"))["figure"] == "epsilon"
