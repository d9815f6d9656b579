"""The real Snakefile on the tiny preset, in a temporary directory: outputs, caching, bad input."""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from helpers import REPO, TINY, hold_folder, job_counts, not_report, snakemake

from pipelib import stages
from pipelib.privacy.nfdp import nfdp

pytestmark = pytest.mark.workflow


def test_builds_every_scenario(tiny):
    """Every scenario of the preset, the 2-party variants of Table 3 / Figure 2(d) (same pool, N = 2) and
    LDP-FL's 8 clients (paper 004's owners are drawn from the pool: no variant of their own)."""
    parts = pd.read_csv(tiny / "results/tiny" / "partitions.csv")
    assert set(parts["scenario"]) == {
        "femnist_iid",
        "femnist_noniid",
        "cifar_iid",
        "cifar_noniid",
        "rknn_mnist",
        "rknn_cifar10",
        "femnist_iid-n2",
        "cifar_iid-n2",
        "ldpdl_mnist",
        "ldpfl_mnist",
        # the audit's variants (docs/audit.md): the scenario's deal plus canaries in party 0
        "femnist_iid-canaries-addremove",
        "femnist_iid-canaries-replace",
        "rknn_mnist-canaries-addremove",
        "rknn_mnist-canaries-replace",
        "ldpfl_mnist-canaries-replace",
        "ldpdl_mnist-canaries-replace",
    }
    parties = parts[parts.role == "party"].groupby("scenario").size()
    sizes = {"ldpdl_mnist": 4, "ldpfl_mnist": 8, "ldpfl_mnist-canaries-replace": 8}
    sizes["ldpdl_mnist-canaries-replace"] = 4
    assert parties.to_dict() == {s: sizes.get(s, 2 if s.endswith("-n2") else 3) for s in parties.index}
    clients = ["ldpfl_mnist", "ldpfl_mnist-canaries-replace"]
    for scenario, count in parties.drop(clients).items():  # LDP-FL's clients need no tables of their own
        for party in range(count):
            assert (tiny / f"results/tiny/partitions/{scenario}/party-{party}.parquet").is_file()
    pools = parts[parts.role == "party"].groupby("scenario")["n"].sum()
    assert pools["femnist_iid-n2"] == pools["femnist_iid"] and pools["cifar_iid-n2"] == pools["cifar_iid"]
    assert pools["ldpdl_mnist"] == 1200


def test_ledger_equals_theorems(tiny):
    ledger = pd.read_csv(tiny / "results/tiny" / "privacy_ledger.csv")
    assert {
        "party",
        "n",
        "k",
        "sampling",
        "epsilon",
        "delta",
        "epsilon_log10_paper_convention",
        "delta_vacuous",
    } <= set(ledger)
    ledger = ledger[ledger.method == "FedMD-NFDP"]
    # every sample drawn: the scenarios' nfdp lists (7 combinations), Table 2's k (3 more) and fedmd.compare's
    # (rknn_mnist k = 16), 3 parties each; and paper002.k = 16 for the 2-party variants of FEMNIST and CIFAR
    # (Table 3, Figure 2(d))
    assert len(ledger) == 3 * 11 + 2 * 2 and not ledger.duplicated(["scenario", "sampling", "k", "party"]).any()
    for row in ledger.itertuples():
        g = nfdp(row.n, row.k, row.sampling)
        assert row.epsilon == pytest.approx(g.epsilon, rel=1e-12)
        assert row.delta == pytest.approx(g.delta, rel=1e-12)
        assert row.epsilon_log10_paper_convention == pytest.approx(g.epsilon / np.log(10), rel=1e-12)
        assert bool(row.delta_vacuous) == (g.delta >= 1 / row.n)
    assert (ledger["preset"] == "tiny").all()


def test_party_n_matches_ledger_and_samples_come_from_the_party(tiny):
    ledger = pd.read_csv(tiny / "results/tiny/samples/femnist_iid/without_replacement-k16/ledger.csv")
    for party in range(3):
        own = pq.read_table(tiny / f"results/tiny/partitions/femnist_iid/party-{party}.parquet").to_pandas()
        sample_path = tiny / f"results/tiny/samples/femnist_iid/without_replacement-k16/party-{party}.parquet"
        sample = pq.read_table(sample_path).to_pandas()
        assert ledger.loc[ledger.party == party, "n"].item() == len(own)
        keys = set(zip(own["split"], own["index"]))
        assert len(sample) == 16 and set(zip(sample["split"], sample["index"])) <= keys
        assert not sample.duplicated(["split", "index"]).any()  # without replacement


def test_parties_and_test_set_are_disjoint(tiny):
    for scenario in ("femnist_noniid", "cifar_noniid"):
        test = pq.read_table(tiny / f"results/tiny/partitions/{scenario}/test.parquet").to_pandas()
        seen = set(zip(test["split"], test["index"]))
        writers = set(test.get("writer", []))
        for party in range(3):
            own = pq.read_table(tiny / f"results/tiny/partitions/{scenario}/party-{party}.parquet").to_pandas()
            keys = set(zip(own["split"], own["index"]))
            assert not keys & seen
            seen |= keys
            if "writer" in own:
                assert not set(own["writer"]) & writers
                writers |= set(own["writer"])


def test_second_run_has_nothing_to_do(tiny, data_root):
    out = snakemake(tiny, "-n", data_root=data_root)
    assert "Nothing to be done" in out.stdout + out.stderr


def test_fresh_raw_file_times_rerun_nothing(data_root, tmp_path):
    """Raw files are checksummed and marked ancient: re-copying the data root (same bytes, new mtimes)
    keeps the cache.  Uses its own copy of MNIST's raw files, so the shared workspace is left alone."""
    root = tmp_path / "data"
    shutil.copytree(data_root / "MNIST", root / "MNIST")
    work, target = tmp_path / "work", "results/tiny/data/mnist/class_counts.csv"
    snakemake(work, data_root=root, targets=[target])
    later = time.time() + 600
    for path in (root / "MNIST").rglob("*"):
        os.utime(path, (later, later))  # the re-copied raw files are now newer than every output
    out = snakemake(work, "-n", data_root=root, targets=[target])
    assert "Nothing to be done" in out.stdout + out.stderr, out.stdout[-2000:]


def test_editing_pipelib_reruns_only_the_rules_that_run_it(data_root, tmp_path):
    """params.code: after an edit of pipelib/partition.py, the partition and party_data jobs re-run,
    ingest (whose script does not import it) does not.  Runs on a copy of pipelib put first on the
    path, so the repository's source is left alone."""
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "pipelib", src / "pipelib", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(src)}
    work, target = tmp_path / "work", ["results/tiny/partitions/femnist_iid/party-0.parquet"]
    snakemake(work, data_root=data_root, targets=target, env=env)
    out = snakemake(work, "-n", data_root=data_root, targets=target, env=env)
    assert "Nothing to be done" in out.stdout + out.stderr
    with open(src / "pipelib" / "data" / "partition.py", "a") as f:
        f.write("\n# an edit\n")
    out = snakemake(work, "-n", data_root=data_root, targets=target, env=env)
    assert job_counts(out.stdout) == {"partition": 1, "party_data": 1}
    assert "Params have changed" in out.stdout


def test_changing_one_k_reruns_only_its_jobs(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("scenarios:\n  femnist_noniid: {nfdp: {sampling: [with_replacement], k: [8]}}\n")
    out = snakemake(tiny, "-n", "--configfile", str(TINY), str(change), data_root=data_root)
    assert job_counts(out.stdout) == {"nfdp_sample": 3, "nfdp_ledger": 1, "privacy_ledger": 1, "all": 1}
    new = re.findall(r"output: (results/tiny/samples/\S+)", out.stdout)
    assert new and all("femnist_noniid/with_replacement-k8/" in p for p in new)


def test_changing_one_table2_k_reruns_only_that_row(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("table2:\n  FEMNIST: {k: [16, 32]}\n")
    out = snakemake(tiny, "-n", "--configfile", str(TINY), str(change), data_root=data_root)
    counts = job_counts(out.stdout)
    assert not_report(counts) == {"nfdp_sample": 3, "fedmd": 1}  # the new row's samples and run, nothing else
    assert {"nfdp_ledger", "table2", "compare", "claims", "privacy_ledger", "reproduction_page"} <= set(counts)
    assert not {"table3", "table_rknn", "table_ldpdl", "table_ldpfl"} & set(counts)  # tables that do not
    assert "results/tiny/fedmd/femnist_iid/softmax/nfdp-with_replacement-k32/result.json" in out.stdout


TABLE2_COLUMNS = [
    "dataset",
    "method",
    "k",
    "n",
    "sampling",
    "epsilon",
    "delta",
    "epsilon_log10_paper_convention",
    "delta_vacuous",
    "sigma",
    "accuracy",
    "accuracy_std",
    "paper_accuracy",
    "paper_epsilon",
    "paper_delta",
    "preset",
    "seed",
]


def test_table2_schema_and_privacy_claims(tiny):
    t = pd.read_csv(tiny / "results/tiny" / "table2.csv")
    assert set(TABLE2_COLUMNS) <= set(t.columns)
    assert list(t["dataset"].unique()) == ["FEMNIST", "CIFAR-10"]
    for label, g in t.groupby("dataset", sort=False):
        assert list(g["method"]) == ["FedMD-NP", "Centralized", "FedMD-NFDP", "FedMD-NFDP", "FedMD-LDP"]
        scenario = {"FEMNIST": "femnist_iid", "CIFAR-10": "cifar_iid"}[label]
        nfdp = g[g.method == "FedMD-NFDP"].sort_values("k")
        for row in nfdp.itertuples():  # NFDP rows carry their ledger's (worst-party) epsilon and delta
            ledger = pd.read_csv(tiny / f"results/tiny/samples/{scenario}/with_replacement-k{row.k}/ledger.csv")
            assert row.epsilon == pytest.approx(ledger["epsilon"].max(), rel=1e-12)
            assert row.delta == pytest.approx(ledger["delta"].max(), rel=1e-12)
            assert row.n == ledger["n"].min()
        assert nfdp["epsilon"].is_monotonic_increasing and nfdp["delta"].is_monotonic_increasing  # more k, more loss
        ldp = g[g.method == "FedMD-LDP"].iloc[0]
        matched = nfdp[nfdp.k == ldp["matched_k"]].iloc[0]
        assert ldp["sigma"] > 0 and ldp["epsilon"] <= matched["epsilon"] * (1 + 1e-9)
        assert ldp["delta"] == pytest.approx(matched["delta"])
        assert np.isinf(g[g.method.isin(["FedMD-NP", "Centralized"])]["epsilon"]).all()
    assert (t["accuracy"] > 1 / 6).all(), t[["dataset", "method", "k", "accuracy"]]  # above chance (6 classes)
    assert (t["preset"] == "tiny").all() and t["paper_accuracy"].notna().sum() == 6
    # the tiny run is far from paper 002's regime: every FedMD row says how (1,215 records a party; FedMD-LDP's
    # 2 x 200 answers); the budget of the other rows is a compute difference (their queries cost no privacy)
    fedmd = t[t.method.str.startswith("FedMD")]
    budget = "distillation budget 2 x 200 public queries (paper 20 x 5,000)"
    ldp = fedmd.method == "FedMD-LDP"
    assert fedmd.loc[ldp, "regime"].str.contains(budget, regex=False).all()
    assert not fedmd.loc[~ldp, "regime"].str.contains(budget, regex=False).any()
    assert (fedmd.loc[~ldp, "compute"] == budget).all() and fedmd.loc[ldp, "compute"].isna().all()
    femnist = fedmd.loc[fedmd.dataset == "FEMNIST", "regime"]
    assert femnist.str.contains("party size n = 1,215 (paper 2,880)", regex=False).all()


def test_the_papers_claims_are_checked_on_the_run(tiny):
    """results/claims.csv: every claim of src/pipelib/claims.yaml with a verdict; a claim on rows outside their
    paper's regime is untested, never refuted; the claims page and the README's summary are generated from it."""
    from pipelib.report.claims import VERDICTS, load_claims

    t = pd.read_csv(tiny / "results/tiny/claims.csv", keep_default_na=False)
    assert list(t["id"]) == [c.id for c in load_claims()] and len(t) >= 20
    assert set(t["verdict"]) <= set(VERDICTS) and (t["preset"] == "tiny").all()
    decided = t[t.verdict.isin(["holds", "does not hold", "inconclusive"])]
    assert len(decided) > 0 and (decided["numbers"] != "").all()
    table2 = t[(t.source == "table2") & (t.form == "trained")]  # a closed form is checked whatever the regime
    assert len(table2) >= 5 and (table2["verdict"] == "untested").all()
    outside = table2[table2.why == "rows outside the paper's regime"]  # rows there, but run outside the regime
    assert len(outside) > 0 and outside["regime"].str.contains("party size").all()
    page = (tiny / "docs/reproduction/tiny/claims.md").read_text()
    assert all(claim in page for claim in t["claim"])
    summary = (tiny / "docs/reproduction/tiny/headline_claims.md").read_text()
    assert f"preset `tiny` ({len(t)} claims" in summary and "- paper 004: " in summary


def test_table2_rounds_and_progress_log(tiny):
    rounds = pq.read_table(tiny / "results/tiny" / "table2_rounds.parquet").to_pandas()
    assert set(rounds["round"]) == {0, 1, 2}
    assert (rounds.groupby(["dataset", "method", "k", "round"]).size() == 3).all()  # every party, every round
    log = (tiny / "results/tiny/logs/fedmd/femnist_iid/softmax/nfdp-with_replacement-k16.log").read_text()
    assert "round 2/2: mean accuracy" in log and "final accuracy" in log


def dry_run_jobs(workdir, data_root, *configfiles, report=None):
    """Every job of the whole DAG (forced), from a dry run's report (kept in ``report``, a list, if given)."""
    from pipelib.boundary import parse_dry_run

    out = snakemake(workdir, "-n", "--forceall", "--configfile", *map(str, configfiles), data_root=data_root)
    if report is not None:
        report.append(out.stdout)
    return parse_dry_run(out.stdout)


def gpu_rules(report: str) -> set[str]:
    """The rules of a dry run's report with a job that asks for a GPU, and the `use rule` variants of them."""
    rules, rule = set(), None
    for line in report.splitlines():
        if m := re.match(r"(?:local)?rule (\w+):", line):
            rule = m.group(1)
        elif re.search(r"^\s+resources:.*\bgpu=[1-9]", line):
            rules.add(rule)
    text = "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    variants = re.findall(r"^use rule (\w+) as (\w+)", text, flags=re.M)
    return rules | {child for parent, child in variants if parent in rules}


def test_dag_keeps_the_privacy_boundary_by_content(tiny, data_root):
    """The DAG is the threat model (pipelib.boundary): every rule has a role, each role reads only the
    kinds of file it may, and the data tables a public, server or report job reads hold none of the rows
    dealt to the parties of the scenarios it serves (checked on the files of the tiny run)."""
    from pipelib import boundary
    from pipelib.config import load, scenarios

    jobs = dry_run_jobs(tiny, data_root, TINY)
    roles = {stages.roles()[j.rule] for j in jobs}
    assert roles == {
        "dealer",
        "party",
        "teachers",
        "curator",
        "owners",
        "public",
        "server",
        "federation",
        "baseline",
        "audit",
        "report",
    }
    running = scenarios(load(REPO / "config.yaml", TINY))
    assert boundary.check(jobs, running, root=tiny, results_dir="results/tiny") == []
    # the check reads content: the server's public table holds public rows only, and a crossing is caught
    student = next(j for j in jobs if j.rule == "distill_student" and j.wildcards["scenario"] == "rknn_cifar10")
    student.inputs.append("results/tiny/data/cifar10/train.parquet")
    assert boundary.check(jobs, running, root=tiny, results_dir="results/tiny") == [
        "distill_student (server) reads results/tiny/data/cifar10/train.parquet: "
        "it holds private records of scenario rknn_cifar10"
    ]


@pytest.mark.parametrize("preset", ["reduced", "paper"])
def test_dag_keeps_the_privacy_boundary_in_the_other_presets(preset, data_root, tmp_path):
    """The same check on the whole DAG of the reduced and paper presets, by name (their files do not
    exist here: an ingested table or a party's table counts as holding private rows)."""
    from pipelib import boundary
    from pipelib.config import load, scenarios

    files = [REPO / "config.yaml"] + ([REPO / "presets" / f"{preset}.yaml"] if preset != "paper" else [])
    if preset == "paper":  # paper 004's full figure grid is 4,000 jobs of the same few rules: one point each
        thin = tmp_path / "thin.yaml"
        thin.write_text("ldpdl: {figures: {epsilon: [5.0], per_query: [30], owners: [10000]}}\n")
        files.append(thin)
    report = []
    jobs = dry_run_jobs(tmp_path, data_root, *files, report=report)
    if preset == "paper":  # every rule that asks for a GPU goes to the SLURM profile's GPU partition
        profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())["set-resources"]
        on_gpu = gpu_rules(report[0])
        assert {"fedmd", "ldpdl_student", "fedmd_ablation"} <= on_gpu
        missing = sorted(r for r in on_gpu if profile.get(r, {}).get("slurm_partition") != "SITE-gpu-partition")
        assert missing == [], f"rules asking for a GPU without profiles/slurm's GPU partition: {missing}"
    assert {j.rule for j in jobs} >= {
        "distill_student",
        "distill_curate",
        "fedmd",
        "train_encoder",
        "ldpdl_release",
        "ldpfl",
    }
    config = load(*files)
    assert boundary.check(jobs, scenarios(config), results_dir=config["results_dir"]) == []


def test_table_rknn(tiny):
    from pipelib.report.tables import TABLE_RKNN_COLUMNS

    t = pd.read_csv(tiny / "results/tiny" / "table_rknn.csv")
    assert list(t.columns) == TABLE_RKNN_COLUMNS
    assert len(t) == 6 and (t["preset"] == "tiny").all()
    mnist = t[t.scenario == "rknn_mnist"]
    assert mnist["label_accuracy"].between(0.3, 1).all() and (mnist["accuracy"] > 0.3).all()  # chance: 0.1
    assert np.isnan(t.loc[t.scenario == "femnist_iid", "label_accuracy"]).all()  # public labels of another space
    assert (t.loc[t.mechanism != "none", "delta"] == 0).all()
    assert (t.loc[t.mechanism == "none", "epsilon"] == np.inf).all()
    # one label per cluster: no labelling beats the clusters' purity (evaluation-only column)
    assert mnist["cluster_purity"].between(0.3, 1).all()
    assert (t["label_accuracy"] <= t["cluster_purity"] + 1e-12).sum() == t["label_accuracy"].notna().sum()
    assert ((t["accuracy_low"] <= t["accuracy"]) & (t["accuracy"] <= t["accuracy_high"])).all()  # Wilson, test_n
    umap = t[t.encoder == "umap_digits"]  # UMAP of deskewed two-scale HOG, fitted on the public pool
    assert len(umap) == 1 and umap["cluster_purity"].iloc[0] > 0.8
    noisy = pq.read_table(
        tiny / "results/tiny/distill/rknn_mnist/rknn-hog-s20-k1/laplace-eps1.0/labels.parquet"
    ).to_pandas()
    assert set(noisy.columns) == {"row", "cluster", "label"} and len(noisy) == 1000


def test_bad_config_fails_before_any_job(tmp_path, data_root):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios:\n  cifar_iid: {scheme: iidd}\n")
    proc = snakemake(tmp_path, "--configfile", str(TINY), str(bad), data_root=data_root, check=False)
    assert proc.returncode != 0
    assert (
        "scenarios.cifar_iid.scheme = 'iidd' is not allowed; allowed values: iid, writer, subclass, dirichlet"
        in proc.stderr
    )
    assert not (tmp_path / "results").exists()


def test_missing_data_fails_before_any_job(tmp_path):
    empty = tmp_path / "no-data"
    empty.mkdir()
    proc = snakemake(tmp_path, data_root=empty, check=False)
    assert proc.returncode != 0
    assert f"raw files missing under data root {empty}" in proc.stderr
    assert "Expected files:" in proc.stderr
    assert not (tmp_path / "results").exists()


def test_a_second_run_on_a_busy_results_folder_stops_and_deletes_nothing(tiny, data_root):
    """Two concurrent runs on one results folder: while the first holds the folder's run lock (here a
    process standing in for its Snakemake, taking the lock as the workflow's onstart does), a second run on
    another target stops before any job, naming the first, and its forced output is untouched; once the
    first is killed (-9) the same command runs."""
    target = tiny / "results/tiny/table2.csv"
    before = target.read_bytes()
    first = hold_folder(tiny / "results/tiny", "first-run")
    try:
        proc = snakemake(
            tiny, "--forcerun", "table2", data_root=data_root, targets=["results/tiny/table2.csv"], check=False
        )
    finally:
        first.kill()
        first.wait()
    assert proc.returncode != 0
    assert "another run is using the results folder results/tiny/" in proc.stderr, proc.stderr[-2000:]
    assert f"pid {first.pid} on" in proc.stderr and "first-run" in proc.stderr
    assert target.read_bytes() == before
    snakemake(tiny, "--forcerun", "table2", data_root=data_root, targets=["results/tiny/table2.csv"])


def test_impossible_k_fails_clearly_and_keeps_finished_work(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("scenarios:\n  cifar_iid: {nfdp: {sampling: [without_replacement], k: [5000]}}\n")
    before = sorted(p for p in (tiny / "results/tiny").rglob("*.parquet"))
    proc = snakemake(tiny, "--configfile", str(TINY), str(change), data_root=data_root, check=False)
    assert proc.returncode != 0
    # refused at config load, before any job, from the partition summary the tiny run already wrote
    assert (
        "NFDP sampling without replacement of k = 5000 records, but the smallest party of scenario "
        "'cifar_iid' holds 1000" in proc.stderr
    ), proc.stderr[-1500:]
    assert all(p.exists() for p in before)
    assert not list((tiny / "results/tiny/samples/cifar_iid").glob("without_replacement-k5000/*.parquet"))


# ------------------------------------------------------------------ one shape for many methods

GOLDEN = Path(__file__).resolve().parent / "golden" / "tiny"
VOLATILE = re.compile(r"seconds$|_per_s$|^hardware$|^device$")  # timings and where the jobs ran
# What a trained model or a fitted embedding measures: the CPU's instruction set changes its float rounding
# (oneDNN, MKL, faiss and numba pick kernels by ISA), so these match the pinned copy only to TRAINED_ATOL.
# Measured: the tiny run on an AVX-512 machine against the copy pinned on another differs by up to 0.014
# (a student's test accuracy), and forcing AVX2 kernels changes a FEMNIST accuracy by 0.002.
TRAINED = re.compile(r"accuracy|purity")
TRAINED_ATOL = 0.03


@pytest.mark.parametrize("table", ["table2.csv", "table_rknn.csv"])
def test_tiny_tables_are_pinned(tiny, table):
    """Every value of the tiny preset's paper tables, except timings and hardware, equals the pinned copy
    (exactly; a trained accuracy or a purity to TRAINED_ATOL): a refactor that changes a privacy number, a row
    or a column fails here (refresh tests/golden/tiny only for an intended change)."""
    got, want = pd.read_csv(tiny / "results/tiny" / table), pd.read_csv(GOLDEN / table)
    assert list(got.columns) == list(want.columns)
    exact = [c for c in got.columns if not VOLATILE.search(c) and not TRAINED.search(c)]
    pd.testing.assert_frame_equal(got[exact], want[exact], check_exact=True, obj=table)
    trained = [c for c in got.columns if TRAINED.search(c) and not c.startswith("paper_")]
    pd.testing.assert_frame_equal(got[trained], want[trained], check_exact=False, atol=TRAINED_ATOL, rtol=0, obj=table)
    paper = [c for c in got.columns if TRAINED.search(c) and c.startswith("paper_")]
    pd.testing.assert_frame_equal(got[paper], want[paper], check_exact=True, obj=table)


def test_ledger_lists_every_privatized_release(tiny):
    ledger = pd.read_csv(tiny / "results/tiny" / "privacy_ledger.csv")
    assert set(ledger["method"]) == {"FedMD-NFDP", "FedMD-LDP", "reverse k-NN", "LDP-DL", "PATE", "LDP-FL", "DP-SGD"}
    assert set(ledger.loc[ledger.method == "reverse k-NN", "mechanism"]) == {"none", "laplace", "rr", "collision"}
    assert ledger[["adjacency", "protected_unit", "accountant", "releases"]].notna().all().all()
    ldp = ledger[ledger.method == "FedMD-LDP"]
    assert len(ldp) == 2 * 3 and (ldp["sigma"] > 0).all()  # one release per party of each LDP row
    local = ledger[ledger.mechanism.isin(["rr", "collision"])]
    assert (local["party"] >= 0).all() and (local["adjacency"] == "any two inputs of a local randomizer").all()
    assert (ledger.loc[ledger.mechanism == "laplace", "party"] == -1).all()  # the curator's release


def test_compare_holds_every_method_in_one_schema(tiny):
    from pipelib.schema import RESULT_COLUMNS

    rows = pd.read_csv(tiny / "results/tiny" / "compare.csv")
    assert list(rows.columns[: len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    assert set(rows["method"]) == {
        "FedMD-NP",
        "FedMD-NFDP",
        "FedMD-LDP",
        "Centralized",
        "reverse k-NN",
        "LDP-DL",
        "PATE",
        "LDP-FL",
        "FedAvg",
        "DP-SGD",
    }
    needed = ["epsilon", "delta", "adjacency", "accountant", "accuracy", "n", "preset", "device"]
    assert rows[needed].notna().all().all()
    from collections import Counter

    fedmd = Counter(rows.loc[rows.method.str.startswith("FedMD"), "accuracy"])
    t2 = pd.read_csv(tiny / "results/tiny" / "table2.csv")
    shown = list(t2.loc[t2.method != "Centralized", "accuracy"])
    for n in (3, 4, 5):  # every FedMD row of a paper table is a compare row (a row shown twice counted once)
        shown += [a for a in pd.read_csv(tiny / f"results/tiny/table{n}.csv")["accuracy"] if a not in shown]
    assert not Counter(shown) - fedmd
    # every row says what kind of guarantee it carries and what its paper claims beside it
    kinds = rows.groupby("method")["guarantee_kind"].agg(lambda k: set(k)).to_dict()
    assert kinds["FedMD-NFDP"] == kinds["FedMD-LDP"] == {"party"} and kinds["PATE"] == {"central"}
    assert kinds["LDP-DL"] == {"local"} and kinds["reverse k-NN"] == {"none", "central", "local"}
    assert kinds["DP-SGD"] == {"central"}
    dp = rows[rows.method == "DP-SGD"].iloc[0]  # the accountant's epsilon, at most the target of its run
    assert dp["scenario"] == "femnist_iid" and 3.98 <= dp["epsilon"] <= 4.0 and dp["delta"] == 1e-5
    assert dp["adjacency"] == "replace one record" and dp["accountant"].startswith("dp-accounting PLD")
    assert dp["epsilon_add_remove"] < dp["epsilon"]  # the reference: the same run's add/remove-one epsilon
    assert kinds["FedMD-NP"] == kinds["Centralized"] == kinds["FedAvg"] == {"none"}
    # LDP-DL and PATE also run on FedMD's split (ldpdl.compare): every distillation method meets there
    met = set(rows.loc[rows.scenario == "femnist_iid", "method"])
    assert {"FedMD-NP", "FedMD-NFDP", "FedMD-LDP", "reverse k-NN", "LDP-DL", "PATE", "DP-SGD"} <= met
    assert {"LDP-FL", "FedAvg"} <= met  # and LDP-FL (ldpfl.compare), each party a client
    assert ((rows.scenario == "femnist_iid") & rows.method.isin(["LDP-DL", "PATE", "LDP-FL", "FedAvg"])).sum() == 4
    # their public samples are MNIST digits, the task FEMNIST letters: no label accuracy across label spaces
    assert (
        rows.loc[(rows.scenario == "femnist_iid") & rows.method.isin(["LDP-DL", "PATE"]), "label_accuracy"].isna().all()
    )
    assert rows.loc[(rows.scenario == "ldpdl_mnist") & (rows.method == "LDP-DL"), "label_accuracy"].notna().all()
    fl = rows[rows.method == "LDP-FL"]
    assert (fl["claim_kind"] == "per-weight-per-round").all() and (fl["claim_epsilon"] == fl["paper_epsilon"]).all()
    assert (fl["epsilon"] > fl["claim_epsilon"]).all()  # the composed guarantee is far weaker than the claim
    others = rows[rows.method != "LDP-FL"]
    assert (others["claim_kind"] == others["guarantee_kind"]).all()
    # FedMD on paper 003's split (fedmd.compare), its parties pre-trained on that split's public pool alone
    # (the rest of MNIST is private there); reverse k-NN on paper 004's split (rknn.compare), not in its table
    assert {"FedMD-NP", "FedMD-NFDP", "reverse k-NN"} <= set(rows.loc[rows.scenario == "rknn_mnist", "method"])
    assert sorted(p.name for p in (tiny / "results/tiny/pretrain_pool/rknn_mnist").glob("*.pt")) == [
        "cnn2-8-16-d0.2-c20.pt",
        "cnn3-8-8-16-d0.2-c20.pt",
    ]
    assert "reverse k-NN" in set(rows.loc[rows.scenario == "ldpdl_mnist", "method"])
    assert "ldpdl_mnist" not in set(pd.read_csv(tiny / "results/tiny/table_rknn.csv")["scenario"])
    # one figure per scenario, drawn from exactly that scenario's rows
    for scenario in ("femnist_iid", "cifar_iid", "rknn_mnist", "ldpdl_mnist", "ldpfl_mnist"):
        data = figure_data(tiny, f"compare_{scenario}")
        assert len(data) == (rows["scenario"] == scenario).sum() > 0, scenario


def test_every_training_stage_keeps_its_final_model(tiny):
    import torch

    models = {p.relative_to(tiny).as_posix() for p in (tiny / "results/tiny").rglob("*.pt") if "resume" not in p.name}
    assert {m for m in models if m.endswith("/models.pt")} and {m for m in models if m.endswith("/student.pt")}
    assert {m for m in models if m.startswith("results/tiny/centralized/") and m.endswith("/model.pt")}
    parties = torch.load(tiny / "results/tiny/fedmd/femnist_iid/softmax/np/models.pt", weights_only=False)
    assert [p["party"] for p in parties] == [0, 1, 2] and all("state_dict" in p for p in parties)
    assert not list((tiny / "results/tiny").rglob("*resume.pt"))  # checkpoints are gone once a job finished


def test_editing_the_report_module_reruns_no_training(tiny, data_root, tmp_path):
    """Code triggers are precise: after an edit of pipelib/report/tables.py only the report rules re-run."""
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "pipelib", src / "pipelib", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = snakemake(tiny, "-n", data_root=data_root, env=env)
    assert "Nothing to be done" in out.stdout + out.stderr  # the copy is the same code
    with open(src / "pipelib" / "report" / "tables.py", "a") as f:
        f.write("\n# an edit\n")
    out = snakemake(tiny, "-n", data_root=data_root, env=env)
    counts = job_counts(out.stdout)
    assert not_report(counts) == {}  # no training, no release
    tables = {"table2", "table3", "table4", "table5", "table_rknn", "table_ldpdl", "table_ldpfl", "compare"}
    assert tables | {"claims", "privacy_ledger", "partition_summary", "reproduction_page"} <= set(counts)
    assert "figure_p002_privacy_vs_k" not in counts  # a closed-form figure does not read the tables module


def test_no_generated_page_holds_text_a_markdown_renderer_reads_as_html(tiny):
    """A '<i>' or '<scenario>' outside a code span is an HTML tag to GitHub's renderer: the word vanishes, or
    everything after it turns italic (the regime note's 'R<i>' did)."""
    pages = sorted((tiny / "docs/reproduction/tiny").glob("*.md"))
    assert len(pages) >= 8
    for page in pages:
        for n, line in enumerate(page.read_text().splitlines(), 1):
            text = re.sub(r"`[^`]*`", "", re.sub(r"<!--.*?-->", "", line))
            assert not re.search(r"</?[A-Za-z][^>]*>", text), f"{page.name}:{n}: {line[:120]}"


def test_reproduction_pages_are_generated_from_the_tables(tiny):
    t2 = pd.read_csv(tiny / "results/tiny" / "table2.csv")
    page = (tiny / "docs/reproduction/tiny/table2.md").read_text()
    assert page.startswith("<!-- generated by the workflow's reproduction_page rule")
    assert "Preset: tiny" in page and "hardware of the jobs: CPU" in page
    from pipelib.report.pages import fmt

    for r in t2.itertuples():  # every row's accuracy with its 95 % interval (over parties and test records)
        assert r.accuracy_low <= r.accuracy <= r.accuracy_high and r.seeds == 1
        assert f"{fmt(r.accuracy)} [{r.accuracy_low:.3f}, {r.accuracy_high:.3f}]" in page
    headline = (tiny / "docs/reproduction/tiny/headline.md").read_text()
    table_lines = [line for line in headline.splitlines() if line.startswith("| ")]  # header and rows
    assert len(table_lines) == len(t2) + 1 + len(pd.read_csv(tiny / "results/tiny/table_rknn.csv")) + 1
    fl = pd.read_csv(tiny / "results/tiny/table_ldpfl.csv")
    p001 = (tiny / "docs/reproduction/tiny/paper001.md").read_text()
    for r in fl.itertuples():  # every accuracy with its 95 % interval over the test records
        assert r.accuracy_low <= r.accuracy <= r.accuracy_high and r.test_records == 1000
        assert f"{r.accuracy:.4g} [{r.accuracy_low:.3f}, {r.accuracy_high:.3f}]" in p001
    # the tiny run departs from the paper's regime in its clients and their records: said, and marked
    assert (
        "| MNIST | clients | 100 | 8 | regime |" in p001
        and "| MNIST | records per client | 600 | 100 | regime |" in p001
    )
    head = (tiny / "docs/reproduction/tiny/headline_paper001.md").read_text()
    assert len([line for line in head.splitlines() if line.startswith("| ")]) == len(fl) + 1


def test_the_box_cost_benchmark_pairs_with_the_workflows_ldpfl_rows(tiny, tmp_path):
    """benchmarks/ldpfl_box_cost.py (issue 51) replays rule ldpfl's runs: unclipped, every round's accuracy equals
    the workflow's noise-free row's (same clients, initial model, batch orders); clipped to the fixed box, the
    workflow's clip-c<c>-r<r> row's, which starts from the noise-free row's initial model."""
    results = tiny / "results/tiny"
    out = {}
    for arm, extra in {"none": ["--no-clip"], "box": []}.items():
        out[arm] = tmp_path / f"{arm}.json"
        cmd = [sys.executable, str(REPO / "benchmarks/ldpfl_box_cost.py"), str(results), "ldpfl_mnist"]
        cmd += ["--configfile", str(TINY), "--out", str(out[arm]), *extra]
        subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=REPO)
    workflow = pd.read_parquet(results / "ldpfl/ldpfl_mnist/none/f1.0-m3/rounds.parquet")
    replay = [r["accuracy"] for r in yaml.safe_load(out["none"].read_text())["rows"]]
    assert replay == workflow.sort_values("round")["accuracy"].tolist()
    box = yaml.safe_load(out["box"].read_text())
    assert box["box"] == [0.0, 0.075] and [r["round"] for r in box["rows"]] == [0, 1, 2, 3]
    clipped = pd.read_parquet(results / "ldpfl/ldpfl_mnist/clip-c0.0-r0.075/f1.0-m3/rounds.parquet")
    assert [r["accuracy"] for r in box["rows"]] == clipped.sort_values("round")["accuracy"].tolist()
    assert clipped["accuracy"].iloc[0] == workflow["accuracy"].iloc[0]  # the same initial model


# -------------------------------------------------------------------- privacy claims that hold up

# What identifies each rule's releases: all its wildcards (and, for a FedMD row, the party), and the digest
# of the preset and the job's settings (pipelib.job.Job.release_id).
RELEASE_FIELDS = {
    rule: fields | {"settings"}
    for rule, fields in {
        "nfdp_sample": {"scenario", "sampling", "k", "party"},
        "distill_release": {"scenario", "teacher", "lmech", "party"},
        "distill_curate": {"scenario", "teacher", "cmech"},
        "fedmd": {"scenario", "answer", "run", "party"},
        "ldpdl_release": {"scenario", "ldmech", "eps", "nq", "design", "qs", "iteration", "owner"},
        "ldpfl": {"scenario", "flmech", "frac", "rounds", "client"},  # each round's draw adds the round
        "dpsgd": {"scenario", "arch", "eps"},  # its two draws (sampling, noise) add which one
    }.items()
}
SHOWN_AS = {
    "ldmech": "{}-eps",
    "eps": "eps{}",
    "nq": "-q{}-",
    "qs": "-{}/",
    "design": "-{}",
    "iteration": "iter-{}/",
    "flmech": "/{}/",
    "frac": "/f{}-",
    "rounds": "-m{}#",
    "client": "#client-{}",
}


def test_every_release_is_keyed_by_everything_that_identifies_it(tiny):
    """Two releases never share a noise draw: each draw is keyed by its rule and every wildcard of its
    job (pipelib.seeding.release_rng), and no two releases of the run have the same key."""
    import json

    ledger = pd.read_csv(tiny / "results/tiny" / "privacy_ledger.csv")
    assert (ledger["randomness"] == "seeded").all() and ledger["release_key"].is_unique
    first = ledger["first_owner"] if "first_owner" in ledger else pd.Series([None] * len(ledger))
    for key, release, first_owner in zip(ledger["release_key"], ledger["release"], first):
        fields = json.loads(key)
        assert set(fields) - {"rule"} == RELEASE_FIELDS[fields.pop("rule")]
        for name, value in fields.items():  # the key names this release, not another one
            if name == "owner":  # one LDP-DL row stands for owners with the same answers: first + how many more
                assert int(value.split("+")[0]) == first_owner
            elif name == "settings":  # the preset's and the job's settings: a digest, not in the file's name
                assert re.fullmatch("[0-9a-f]{16}", value)
            else:
                shown = f"party-{value}" if name == "party" else SHOWN_AS.get(name, "{}").format(value)
                assert shown in release, (name, value, release)


def test_entropy_randomness_is_secret_and_recorded(data_root, tmp_path):
    """privacy.randomness: entropy draws every mechanism's randomness from the OS: the same job run
    twice draws a different sample, and the ledger says which mode made it."""
    import json

    mode = tmp_path / "entropy.yaml"
    mode.write_text("privacy: {randomness: entropy}\n")
    target = ["results/tiny/samples/femnist_iid/with_replacement-k16/party-0.parquet"]
    samples = []
    for _ in range(2):
        snakemake(
            tmp_path,
            "--configfile",
            str(TINY),
            str(mode),
            "--forcerun",
            "nfdp_sample",
            data_root=data_root,
            targets=target,
        )
        samples.append(pq.read_table(tmp_path / target[0]).column("index").to_pylist())
    assert samples[0] != samples[1]
    ledger = json.loads((tmp_path / target[0].replace(".parquet", ".ledger.json")).read_text())
    assert ledger[0]["randomness"] == "entropy"


def test_every_row_states_its_epsilon_at_the_reference_delta(tiny):
    """One common scale: epsilon at delta_ref = 1e-5 on every row; NFDP's is infinite (its guarantee is
    its delta); the paper's log10 convention only on NFDP rows; FedMD-LDP accuracies evaluation-only."""
    t = pd.read_csv(tiny / "results/tiny" / "table2.csv")
    assert (t["delta_ref"] == 1e-5).all()
    nfdp_rows, ldp = t[t.method == "FedMD-NFDP"], t[t.method == "FedMD-LDP"]
    assert np.isinf(t.loc[t.method != "FedMD-LDP", "epsilon_at_delta_ref"]).all()
    assert nfdp_rows["epsilon_log10_paper_convention"].notna().all()
    assert t.loc[t.method != "FedMD-NFDP", "epsilon_log10_paper_convention"].isna().all()
    assert (np.isfinite(ldp["epsilon_at_delta_ref"]) & (ldp["epsilon_at_delta_ref"] > ldp["epsilon"])).all()
    assert (ldp["sigma_rdp"] > 1.3 * ldp["sigma"]).all() and (ldp["epsilon_rdp"] >= ldp["epsilon"]).all()
    assert ldp["evaluation_only"].all() and not t.loc[t.method != "FedMD-LDP", "evaluation_only"].any()
    assert (t.loc[t.method.isin(["FedMD-NFDP", "FedMD-LDP"]), "adjacency"] == "replace one record").all()
    rounds = pq.read_table(tiny / "results/tiny" / "table2_rounds.parquet").to_pandas()
    assert (rounds["evaluation_only"] == (rounds["method"] == "FedMD-LDP")).all()
    r = pd.read_csv(tiny / "results/tiny" / "table_rknn.csv")
    noisy = r[r.mechanism != "none"]
    assert (noisy["epsilon_at_delta_ref"] == noisy["epsilon"]).all()  # pure DP
    assert np.isinf(r.loc[r.mechanism == "none", "epsilon_at_delta_ref"]).all()
    ledger = pd.read_csv(tiny / "results/tiny" / "privacy_ledger.csv")
    assert ledger[["delta_ref", "epsilon_at_delta_ref", "curve", "randomness"]].notna().all().all()


# ------------------------------------------------------------------ the papers' tables and figures

FIGURES = [
    "p002_privacy_vs_parties",
    "p002_accuracy_vs_parties",
    "p002_rounds",
    "p002_privacy_vs_k",
    "p003_queries_and_neighbours",
    "p003_local_dp",
    "p004_mnist",
    "p001_clients",
    "p001_fraction_rounds",
    "p001_epsilon",
    "audit",
    "compare_cifar_iid",
    "compare_ldpfl_mnist",
]


def figure_data(tiny, name):
    base = tiny / "results/tiny/figures" / name
    png, svg = base.with_suffix(".png"), base.with_suffix(".svg")
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 5000 and b"<svg" in svg.read_bytes()[:2000]
    return pd.read_csv(base.with_suffix(".csv"))


def test_every_figure_is_drawn_from_its_data(tiny):
    rounds = figure_data(tiny, "p002_rounds")
    assert set(rounds["dataset"]) == {"FEMNIST", "CIFAR-10"} and set(rounds["round"]) == {0, 1, 2}
    assert (rounds.groupby(["dataset", "round"]).size() == 3).all()  # every party, every round
    by_n = figure_data(tiny, "p002_accuracy_vs_parties")
    assert sorted(by_n["parties"]) == [2, 2, 3, 3] and (by_n["answer"] == "argmax").all()
    sweep = figure_data(tiny, "p003_queries_and_neighbours")
    assert set(zip(sweep["dataset"], sweep["sweep"])) == {(d, s) for d in ("MNIST", "CIFAR-10") for s in "sk"}
    assert sweep["label_accuracy"].between(0, 1).all()
    local = figure_data(tiny, "p003_local_dp")
    assert set(zip(local["dataset"], local["mechanism"])) == {
        (d, m) for d in ("MNIST", "CIFAR-10") for m in ("rr", "collision")
    }
    for data in (sweep, local):  # one label per cluster: no mechanism labels above the clusters' purity
        assert (data["label_accuracy"] <= data["cluster_purity"] + 1e-9).all()
    p004 = figure_data(tiny, "p004_mnist")
    assert set(zip(p004["sweep"], p004["mechanism"], p004["aqs"])) == {
        (s, m, a) for s in ("epsilon", "per_query", "owners") for m in ("pm",) for a in (True, False)
    }
    assert set(p004.loc[p004.sweep == "owners", "owners"]) == {20} and p004["accuracy"].between(0, 1).all()
    clients = figure_data(tiny, "p001_clients")
    assert set(zip(clients["x"], clients["private"])) == {(8, True), (8, False)}
    fr = figure_data(tiny, "p001_fraction_rounds")
    assert sorted(fr.loc[fr.panel == "fraction", "x"]) == [0.5, 1.0]
    assert set(fr.loc[fr.panel == "rounds", "x"]) == {0, 1, 2, 3}  # every round of every fraction's run
    eps = figure_data(tiny, "p001_epsilon")
    assert set(eps["panel"]) == {"epsilon", "radius"} and eps["accuracy"].between(0, 1).all()
    assert len(figure_data(tiny, "p002_privacy_vs_parties")) == 2 * 10
    assert len(figure_data(tiny, "p002_privacy_vs_k")) == 2 * 100


def test_tables_3_to_5_beside_the_paper(tiny):
    t3 = pd.read_csv(tiny / "results/tiny/table3.csv")
    assert sorted(zip(t3["dataset"], t3["parties"])) == sorted((d, n) for d in ("FEMNIST", "CIFAR-10") for n in (2, 3))
    assert (t3["k"] == 16).all() and t3["paper_accuracy"].isna().all()  # the paper's N are 5 and 10
    t4 = pd.read_csv(tiny / "results/tiny/table4.csv")
    assert set(zip(t4["dataset"], t4["setting"])) == {
        (d, s) for d in ("FEMNIST", "CIFAR-10") for s in ("IID", "non-IID")
    }
    assert set(t4["scenario"]) == {"femnist_iid", "femnist_noniid", "cifar_iid", "cifar_noniid"}
    assert t4["paper_accuracy"].notna().all()
    t5 = pd.read_csv(tiny / "results/tiny/table5.csv")
    assert set(t5["sampling"]) == {"with_replacement", "without_replacement"}
    for t in (t3, t4, t5):  # every accuracy with its interval over the parties and the test records
        assert ((t["accuracy_low"] < t["accuracy"]) & (t["accuracy"] < t["accuracy_high"])).all()
    wr = t5.set_index(["dataset", "sampling"])
    assert (wr.xs("without_replacement", level=1)["epsilon"] > wr.xs("with_replacement", level=1)["epsilon"]).all()


def test_the_html_report_holds_every_table_and_figure(tiny, data_root):
    out = snakemake(tiny, "--report", "report.html", data_root=data_root)
    assert out.returncode == 0
    html = (tiny / "report.html").read_text(errors="replace")
    for name in FIGURES:
        assert f"{name}.png" in html, name
    for table in (
        "table2.csv",
        "table3.csv",
        "table4.csv",
        "table5.csv",
        "table_rknn.csv",
        "table_ldpdl.csv",
        "table_ldpfl.csv",
        "compare.csv",
        "privacy_ledger.csv",
        "audit.csv",
        "claims.csv",
    ):
        assert table in html, table
    # it opens on the papers' claims: the per-paper summary of claims.csv (the global description)
    summary = (tiny / "docs/reproduction/tiny/headline_claims.md").read_text()
    lines = [line[2:] for line in summary.splitlines() if line.startswith("- paper ")]
    assert len(lines) == 4 and all(line in html for line in lines), lines
    assert "align-items: flex-start !important" in html  # workflow/report/style.css: the page starts at the top
    assert "flex: 0 0 min(60rem, 70vw)" in html  # and its description keeps a readable width beside the graph


# --------------------------------------------------------------------------------------------- audit


def test_the_audit_bounds_every_release_below_its_claim(tiny):
    """results/audit.csv: the validation rows (randomized response of known epsilon, and the bits
    themselves) and every audited reverse k-NN release, each with its claim and a bound below it."""
    a = pd.read_csv(tiny / "results/tiny/audit.csv")
    assert set(a["method"]) == {
        "validation: randomized response",
        "validation: no mechanism",
        "reverse k-NN",
        "FedMD-NP",
        "FedMD-NFDP",
        "DP-SGD",
        "LDP-FL",
        "LDP-DL",
        "PATE",
    }
    assert not a["exceeds_claim"].any()
    rr = a[a.method == "validation: randomized response"].set_index("epsilon")
    assert sorted(rr.index) == [1.0, 4.0] and ((rr["epsilon_lb"] > 0) & (rr["epsilon_lb"] < rr.index)).all()
    assert a.loc[a.method == "validation: no mechanism", "epsilon_lb"].item() > 2.0
    rk = a[a.method == "reverse k-NN"]
    assert (rk["canaries"] == 200).all() and set(rk["audited_scenario"]) == {
        "rknn_mnist-canaries-addremove",
        "rknn_mnist-canaries-replace",
    }
    assert set(rk["released"]) == {"the curator's noisy counts", "party 0's local reports"}
    assert rk[["epsilon_lb", "auc", "guesses", "correct", "adjacency", "accountant"]].notna().all().all()
    fm = a[a.method.str.startswith("FedMD")].set_index("method")
    assert set(fm["released"]) == {"party 0's final model"}
    assert fm.loc["FedMD-NFDP", "audited_scenario"] == "femnist_iid-canaries-replace"
    assert fm.loc["FedMD-NFDP", "audit_delta"] == fm.loc["FedMD-NFDP", "delta"] > 0  # NFDP's own delta
    assert fm.loc["FedMD-NP", "audited_scenario"] == "femnist_iid-canaries-addremove"
    dp = a[a.method == "DP-SGD"].iloc[0]  # its model, trained on the replace variant's pooled records
    assert dp["audited_scenario"] == "femnist_iid-canaries-replace" and dp["released"] == "the DP-SGD model"
    assert dp["adjacency"] == "replace one record" and 3.98 <= dp["epsilon"] <= 4.0 and dp["audit_delta"] == 1e-5
    fl = a[a.method == "LDP-FL"].iloc[0]  # the global model; client 0's composed claim, the paper's beside it
    assert fl["audited_scenario"] == "ldpfl_mnist-canaries-replace" and fl["released"] == "the final global model"
    assert fl["paper_epsilon"] == 8.0 and fl["epsilon"] > 1000 and fl["exceeds_paper_claim"] in (True, False)
    st = a[a.method.isin(["LDP-DL", "PATE"])].set_index("method")  # the final students; owner 0's claim
    assert set(st["audited_scenario"]) == {"ldpdl_mnist-canaries-replace"} and set(st["released"]) == {
        "the final student"
    }
    assert (
        st.loc["LDP-DL", "adjacency"] == "any two inputs of a local randomizer" and st.loc["LDP-DL", "epsilon"] <= 8.0
    )
    assert st.loc["PATE", "adjacency"] == "replace one record" and 7.9 < st.loc["PATE", "epsilon"] <= 8.0
    assert figure_data(tiny, "audit")["epsilon_lb"].tolist() == a["epsilon_lb"].tolist()


def test_the_comparison_page_shows_every_scenario_and_every_audit_row(tiny):
    """docs/reproduction/<preset>/compare.md: per scenario of compare.csv, each method's best row at each kind
    of guarantee; then every audit row with its claim and bound."""
    page = (tiny / "docs/reproduction/tiny/compare.md").read_text()
    rows, audit = pd.read_csv(tiny / "results/tiny/compare.csv"), pd.read_csv(tiny / "results/tiny/audit.csv")
    for scenario, group in rows.groupby("scenario"):
        section = page.split(f"## {scenario}\n", 1)[1].split("\n## ", 1)[0]
        assert len([line for line in section.splitlines() if line.startswith("| ")]) - 1 == len(
            group.groupby(["method", "guarantee_kind"])
        )
        best = group.loc[group["accuracy"].idxmax()]
        assert f"| {best['accuracy']:.4f} |" in section
    audit_section = page.split("## The audit", 1)[1]
    assert len([line for line in audit_section.splitlines() if line.startswith("| ")]) - 1 == len(audit)
    # each defined scenario's figure under its section, the audit's under the audit (copied beside the page)
    figures = sorted((tiny / "docs/reproduction/tiny/figures").glob("compare_*.png"))
    defined = {sc for sc in rows["scenario"] if "-" not in sc}  # variants are <scenario>-n<N>, -canaries-*
    assert defined and {f.stem.removeprefix("compare_") for f in figures} == defined
    for f in figures:
        section = page.split(f"## {f.stem.removeprefix('compare_')}\n", 1)[1].split("\n## ", 1)[0]
        assert f"](figures/{f.name})" in section
    assert "](figures/audit.png)" in audit_section
    assert (tiny / "docs/reproduction/tiny/figures/audit.png").stat().st_size > 0


def test_only_the_auditor_reads_the_canaries(tiny, data_root):
    """The canary list exists only for the audited variants, and only the audit's rules read it."""

    canaries = sorted((tiny / "results/tiny/partitions").glob("*/canaries.parquet"))
    assert [c.parent.name for c in canaries] == [
        "femnist_iid-canaries-addremove",
        "femnist_iid-canaries-replace",
        "ldpdl_mnist-canaries-replace",
        "ldpfl_mnist-canaries-replace",
        "rknn_mnist-canaries-addremove",
        "rknn_mnist-canaries-replace",
    ]
    jobs = dry_run_jobs(tiny, data_root, TINY)
    readers = {j.rule for j in jobs for i in j.inputs if i.endswith("/canaries.parquet")}
    assert readers and {stages.roles()[r] for r in readers} == {"audit"}


def test_the_budget_ablation_reuses_the_table2_runs_and_pretrains_once_per_epoch_count(data_root, tmp_path):
    """paper002.budget: a point at the preset's own rounds, queries and pre-training epochs is the Table 2
    run itself; another number of rounds at the preset's epochs starts from the preset's pre-training;
    each other epoch count pre-trains every (public dataset, architecture) once."""
    points = tmp_path / "points.yaml"
    points.write_text("paper002:\n  budget: {k: 16, points: [[2, 200, 1], [3, 200, 1], [2, 200, 2]]}\n")
    target = "results/tiny/fedmd_budget.csv"
    out = snakemake(tmp_path, "-n", "--configfile", str(TINY), str(points), data_root=data_root, targets=[target])
    counts = job_counts(out.stdout)
    assert counts["pretrain_epochs"] == 4 and counts["pretrain"] == 4  # 2 public datasets x 2 architectures
    assert counts["fedmd_budget"] == 8 and counts["fedmd"] == 4  # 2 datasets x (NP, NFDP k = 16)
    made = set(re.findall(r"output: results/tiny/(pretrain/[^,\s]+\.pt)", out.stdout))
    assert {p for p in made if "/e" in p} == {p for p in made if "/e2/" in p} and len(made) == 8
    runs = set(re.findall(r"output: results/tiny/(fedmd(?:_budget)?/[^,\s]+)/result\.json", out.stdout))
    assert "fedmd/femnist_iid/softmax/np" in runs
    assert "fedmd_budget/femnist_iid/softmax/R3-q200-pe1/np" in runs
    assert "fedmd_budget/cifar_iid/softmax/R2-q200-pe2/nfdp-with_replacement-k16" in runs


def test_the_budget_ablation_runs_as_its_own_command_and_generates_its_page(tiny, data_root):
    """One command makes the ablation's table, figure and page (not part of `rule all`): here the tiny
    preset's point of its own (3 x 200 queries, 2 pre-training epochs) beside its Table 2 point; verify
    keeps the re-runs out of table2.csv's and compare.csv's checks.  Last in this file: it adds outputs."""
    page = "docs/reproduction/tiny/fedmd_budget.md"
    out = snakemake(tiny, "-n", data_root=data_root, targets=[page])
    assert job_counts(out.stdout) == {
        "pretrain_epochs": 4,
        "fedmd_budget": 4,
        "table_fedmd_budget": 1,
        "figure_p002_budget": 1,
        "reproduction_figure": 1,
        "reproduction_page": 1,
    }
    snakemake(tiny, data_root=data_root, targets=[page])
    t = pd.read_csv(tiny / "results/tiny/fedmd_budget.csv")
    assert len(t) == 8 and set(t["budget"]) == {400, 600} and (t["accuracy_low"] <= t["accuracy"]).all()
    table2 = pd.read_csv(tiny / "results/tiny/table2.csv")
    own = t[t["budget"] == 400]  # the preset's own point is the Table 2 row (NP, and NFDP at k = 16)
    for r in own.itertuples():
        row = table2[(table2["dataset"] == r.dataset) & (table2["method"] == r.method)]
        row = row[row["k"] == 16] if r.method == "FedMD-NFDP" else row
        assert len(row) == 1 and row["accuracy"].iloc[0] == pytest.approx(r.accuracy)
    text = (tiny / page).read_text()
    assert text.startswith("<!-- generated") and "![Accuracy against rounds x public queries" in text
    assert (tiny / "docs/reproduction/tiny/figures/p002_budget.png").is_file()
    pipelib = Path(sys.executable).parent / "pipelib"
    proc = subprocess.run([pipelib, "verify", "results/tiny"], cwd=tiny, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_the_loop_ablation_runs_as_its_own_command_and_generates_its_page(tiny, data_root):
    """paper002.ablation: one command makes FedMD-NFDP's rows under each variant of the loop, the pooled
    ceilings and the page; a variant drawing FedMD's class-stratified sample runs on its own samples, whose
    guarantee its row states.  Adds outputs (after the budget ablation's test)."""
    page = "docs/reproduction/tiny/fedmd_ablation.md"
    out = snakemake(tiny, "-n", data_root=data_root, targets=[page])
    counts = job_counts(out.stdout)
    assert counts["fedmd_ablation"] == 3 and counts["centralized_pooled"] == 6  # 2 + 1 rows; 3 draws x 2 archs
    assert counts["nfdp_sample"] == 3 and counts["nfdp_ledger"] == 1  # the stratified draw of CIFAR-10's parties
    snakemake(tiny, data_root=data_root, targets=[page])
    t = pd.read_csv(tiny / "results/tiny/fedmd_ablation.csv")
    runs, pooled = t[t.variant != "pooled ceiling"], t[t.variant == "pooled ceiling"]
    assert list(runs.variant) == ["shared_adam", "shared_adam", "fedmd_code"]
    assert runs["vs_first"].isna().sum() == 2 and runs["vs_first"].notna().sum() == 1  # paired with shared_adam
    assert (runs["peak_accuracy"] >= runs["accuracy"]).all() and (runs["after_peak_high"] >= runs["after_peak"]).all()
    assert len(pooled) == 3 and (pooled["accuracy_low"] <= pooled["accuracy"]).all() and (pooled["epochs"] == 2).all()
    ledger = pd.read_csv(tiny / "results/tiny/samples/cifar_iid/stratified_with_replacement-k16/ledger.csv")
    strat = runs[runs.variant == "fedmd_code"].iloc[0]
    assert strat["epsilon"] == pytest.approx(ledger["epsilon"].max()) and "of its class" in ledger["protected_unit"][0]
    table2 = pd.read_csv(tiny / "results/tiny/table2.csv")
    same = table2[(table2.dataset == "CIFAR-10") & (table2.method == "FedMD-NFDP") & (table2.k == 16)]
    first = runs[(runs.dataset == "CIFAR-10") & (runs.variant == "shared_adam")].iloc[0]
    assert first["epsilon"] == same["epsilon"].iloc[0]  # the same samples as the Table 2 row
    text = (tiny / page).read_text()
    assert text.startswith("<!-- generated") and "CIFAR-10, k = 16: the pooled ceiling" in text
    assert "fedmd_code ends at" in text and "against shared_adam" in text
    # its runs and stratified samples are not rule all's: the ledger and compare.csv still agree with the run
    verify = subprocess.run(
        [Path(sys.executable).parent / "pipelib", "verify", "results/tiny"], cwd=tiny, capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stdout[-1500:]


@pytest.mark.workflow
def test_every_jobs_code_param_is_the_digest_of_its_script(tiny):
    """The code param a job ran with (kept in its metadata, among its params' reprs) is code_digest of its
    script computed afresh here: the Snakefile's per-call cache of parsed modules changes no digest.
    Every fourth script by name (a fresh digest costs about a second; any script after the first would
    show a cache that leaks between scripts)."""
    import json

    from pipelib.provenance import code_digest

    runs: dict[str, list] = {}
    for record in (tiny / ".snakemake/metadata").iterdir():
        meta = json.loads(record.read_text())
        script = re.search(r"\.\./scripts/(\w+\.py)", meta.get("code") or "")
        if script:
            runs.setdefault(script.group(1), []).append((meta["rule"], meta.get("params") or []))
    assert len(runs) >= 30 and "view.py" in runs, sorted(runs)
    from pipelib.report.registry import VIEWS

    # and view.py's jobs, each a table or figure whose digest also covers its registry entry's module
    for name in dict.fromkeys([*sorted(runs)[::4], "view.py"]):
        for rule, params in runs[name]:
            also = (VIEWS[rule].module,) if name == "view.py" else ()
            expected = repr(code_digest(REPO / "workflow/scripts" / name, also=also))
            assert expected in params, (rule, name, params)
