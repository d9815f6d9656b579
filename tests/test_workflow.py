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

from pipelib import privacy

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TINY = REPO / "presets" / "tiny.yaml"


def snakemake(workdir, *args, data_root=None, check=True, targets=(), env=None):
    cmd = [*SNAKEMAKE, *targets, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", "2",
           "--configfile", str(TINY), *args]
    if data_root is not None:
        cmd += ["--config", f"data_root={data_root}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def job_counts(output: str) -> dict[str, int]:
    """Parse the 'Job stats' table of a dry run."""
    m = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\ntotal", output, flags=re.S)
    assert m, output[-2000:]
    return {name: int(n) for name, n in (line.split() for line in m.group(1).strip().splitlines())}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, data_root):
    work = tmp_path_factory.mktemp("tiny")
    snakemake(work, data_root=data_root)
    return work


def test_builds_every_scenario(tiny):
    parts = pd.read_csv(tiny / "results" / "partitions.csv")
    assert set(parts["scenario"]) == {"femnist_iid", "femnist_noniid", "cifar_iid", "cifar_noniid",
                                      "rknn_mnist", "rknn_cifar10"}
    assert (parts[parts.role == "party"].groupby("scenario").size() == 3).all()
    for scenario in parts["scenario"].unique():
        for party in range(3):
            assert (tiny / f"results/partitions/{scenario}/party-{party}.parquet").is_file()


def test_ledger_equals_theorems(tiny):
    ledger = pd.read_csv(tiny / "results" / "privacy_ledger.csv")
    assert {"party", "n", "k", "sampling", "epsilon", "delta", "epsilon_log10", "delta_vacuous"} <= set(ledger)
    assert len(ledger) == 3 * 7  # 7 (scenario, sampling, k) combinations of the tiny preset, 3 parties each
    for row in ledger.itertuples():
        g = privacy.nfdp(row.n, row.k, row.sampling)
        assert row.epsilon == pytest.approx(g.epsilon, rel=1e-12)
        assert row.delta == pytest.approx(g.delta, rel=1e-12)
        assert row.epsilon_log10 == pytest.approx(g.epsilon / np.log(10), rel=1e-12)
        assert bool(row.delta_vacuous) == (g.delta >= 1 / row.n)
    assert (ledger["preset"] == "tiny").all()


def test_party_n_matches_ledger_and_samples_come_from_the_party(tiny):
    ledger = pd.read_csv(tiny / "results/samples/femnist_iid/without_replacement-k16/ledger.csv")
    for party in range(3):
        own = pq.read_table(tiny / f"results/partitions/femnist_iid/party-{party}.parquet").to_pandas()
        sample = pq.read_table(tiny / f"results/samples/femnist_iid/without_replacement-k16/party-{party}.parquet").to_pandas()
        assert ledger.loc[ledger.party == party, "n"].item() == len(own)
        keys = set(zip(own["split"], own["index"]))
        assert len(sample) == 16 and set(zip(sample["split"], sample["index"])) <= keys
        assert not sample.duplicated(["split", "index"]).any()  # without replacement


def test_parties_and_test_set_are_disjoint(tiny):
    for scenario in ("femnist_noniid", "cifar_noniid"):
        test = pq.read_table(tiny / f"results/partitions/{scenario}/test.parquet").to_pandas()
        seen = set(zip(test["split"], test["index"]))
        writers = set(test.get("writer", []))
        for party in range(3):
            own = pq.read_table(tiny / f"results/partitions/{scenario}/party-{party}.parquet").to_pandas()
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
    work, target = tmp_path / "work", "results/data/mnist/class_counts.csv"
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
    work, target = tmp_path / "work", ["results/partitions/femnist_iid/party-0.parquet"]
    snakemake(work, data_root=data_root, targets=target, env=env)
    out = snakemake(work, "-n", data_root=data_root, targets=target, env=env)
    assert "Nothing to be done" in out.stdout + out.stderr
    with open(src / "pipelib" / "partition.py", "a") as f:
        f.write("\n# an edit\n")
    out = snakemake(work, "-n", data_root=data_root, targets=target, env=env)
    assert job_counts(out.stdout) == {"partition": 1, "party_data": 1}
    assert "Params have changed" in out.stdout


def test_changing_one_k_reruns_only_its_jobs(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("scenarios:\n  femnist_noniid: {nfdp: {sampling: [with_replacement], k: [8]}}\n")
    out = snakemake(tiny, "-n", "--configfile", str(TINY), str(change), data_root=data_root)
    assert job_counts(out.stdout) == {"nfdp_sample": 3, "nfdp_ledger": 1, "privacy_ledger": 1, "all": 1}
    new = re.findall(r"output: (results/samples/\S+)", out.stdout)
    assert new and all("femnist_noniid/with_replacement-k8/" in p for p in new)


def test_changing_one_table2_k_reruns_only_that_row(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("table2:\n  FEMNIST: {k: [16, 32]}\n")
    out = snakemake(tiny, "-n", "--configfile", str(TINY), str(change), data_root=data_root)
    assert job_counts(out.stdout) == {"nfdp_sample": 3, "nfdp_ledger": 1, "fedmd": 1, "table2": 1, "all": 1}
    assert "results/fedmd/femnist_iid/softmax/nfdp-with_replacement-k32/result.json" in out.stdout


TABLE2_COLUMNS = ["dataset", "method", "k", "n", "sampling", "epsilon", "delta", "epsilon_log10", "delta_vacuous",
                  "sigma", "accuracy", "accuracy_std", "paper_accuracy", "paper_epsilon", "paper_delta", "preset",
                  "seed"]


def test_table2_schema_and_privacy_claims(tiny):
    t = pd.read_csv(tiny / "results" / "table2.csv")
    assert set(TABLE2_COLUMNS) <= set(t.columns)
    assert list(t["dataset"].unique()) == ["FEMNIST", "CIFAR-10"]
    for label, g in t.groupby("dataset", sort=False):
        assert list(g["method"]) == ["FedMD-NP", "Centralized", "FedMD-NFDP", "FedMD-NFDP", "FedMD-LDP"]
        scenario = {"FEMNIST": "femnist_iid", "CIFAR-10": "cifar_iid"}[label]
        nfdp = g[g.method == "FedMD-NFDP"].sort_values("k")
        for row in nfdp.itertuples():  # NFDP rows carry their ledger's (worst-party) epsilon and delta
            ledger = pd.read_csv(tiny / f"results/samples/{scenario}/with_replacement-k{row.k}/ledger.csv")
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


def test_table2_rounds_and_progress_log(tiny):
    rounds = pq.read_table(tiny / "results" / "table2_rounds.parquet").to_pandas()
    assert set(rounds["round"]) == {0, 1, 2}
    assert (rounds.groupby(["dataset", "method", "k", "round"]).size() == 3).all()  # every party, every round
    log = (tiny / "results/logs/fedmd/femnist_iid/softmax/nfdp-with_replacement-k16.log").read_text()
    assert "round 2/2: mean accuracy" in log and "final accuracy" in log


PRIVATE = re.compile(r"results/partitions/[^/]+/party-\d+\.parquet|results/samples/.*/party-\d+\.parquet"
                     r"|/votes/party-\d+|results/rknn/[^/]+/[^/]+/party-\d+\.npy")
PARTY_RULES = {"party_data", "nfdp_sample", "embed_party", "party_votes", "party_local_answer"}
SERVER_RULES = {"aggregate_local", "label_queries", "student", "table_rknn", "table2", "nfdp_ledger",
                "privacy_ledger", "partition_summary", "cluster", "embed_public", "train_encoder"}


def dag_jobs(output: str):
    """(rule, inputs, outputs) of every job in a dry run's report."""
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m:
            continue
        field = {k: re.search(rf"^\s+{k}: (.*)$", block, flags=re.M) for k in ("input", "output")}
        yield m.group(1), *[f.group(1).split(", ") if f else [] for f in field.values()]


def test_dag_keeps_the_privacy_boundary(data_root, tmp_path):
    """The DAG is the threat model: a party job reads only its own party's files; the server's and
    the reports' jobs never read a party's records, sample, private embeddings or raw votes."""
    out = snakemake(tmp_path, "-n", "--forceall", data_root=data_root).stdout
    jobs = list(dag_jobs(out))
    assert {rule for rule, _, _ in jobs} >= PARTY_RULES | SERVER_RULES | {"curate", "fedmd"}
    for rule, inputs, outputs in jobs:
        if rule in PARTY_RULES:
            party = {re.search(r"party-(\d+)", o).group(1) for o in outputs}
            assert len(party) == 1, (rule, outputs)
            for i in inputs:
                m = re.search(r"party-(\d+)", i)
                assert m is None or {m.group(1)} == party, (rule, i, outputs)
        if rule in SERVER_RULES:
            assert not [i for i in inputs if PRIVATE.search(i)], (rule, inputs)
        if rule == "curate":  # the trusted curator of central DP reads raw votes and nothing else private
            assert all("/votes/party-" in i for i in inputs), inputs


def test_table_rknn(tiny):
    t = pd.read_csv(tiny / "results" / "table_rknn.csv")
    assert list(t.columns[:15]) == ["dataset", "scenario", "encoder", "s", "k", "mechanism", "epsilon", "delta",
                                    "adjacency", "label_accuracy", "test_accuracy", "paper_test_accuracy",
                                    "paper_label_accuracy", "preset", "seed"]
    assert len(t) == 6 and (t["preset"] == "tiny").all()
    mnist = t[t.scenario == "rknn_mnist"]
    assert mnist["label_accuracy"].between(0.3, 1).all() and (mnist["test_accuracy"] > 0.3).all()  # chance: 0.1
    assert np.isnan(t.loc[t.scenario == "femnist_iid", "label_accuracy"]).all()  # public labels of another space
    assert (t.loc[t.mechanism != "none", "delta"] == 0).all()
    assert (t.loc[t.mechanism == "none", "epsilon"] == np.inf).all()
    noisy = pq.read_table(tiny / "results/rknn/rknn_mnist/hog/s20/k1/laplace-eps1.0/labels.parquet").to_pandas()
    assert set(noisy.columns) == {"row", "cluster", "label"} and len(noisy) == 1000


def test_lint_is_clean():
    proc = subprocess.run([*SNAKEMAKE, "--lint", "--snakefile", str(REPO / "Snakefile")], capture_output=True,
                          text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr


def test_bad_config_fails_before_any_job(tmp_path, data_root):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios:\n  cifar_iid: {scheme: iidd}\n")
    proc = snakemake(tmp_path, "--configfile", str(TINY), str(bad), data_root=data_root, check=False)
    assert proc.returncode != 0
    assert "scenarios.cifar_iid.scheme = 'iidd' is not allowed; allowed values: iid, writer, subclass, dirichlet" \
        in proc.stderr
    assert not (tmp_path / "results").exists()


def test_missing_data_fails_before_any_job(tmp_path):
    empty = tmp_path / "no-data"
    empty.mkdir()
    proc = snakemake(tmp_path, data_root=empty, check=False)
    assert proc.returncode != 0
    assert f"raw files missing under data root {empty}" in proc.stderr
    assert "Expected files:" in proc.stderr
    assert not (tmp_path / "results").exists()


def test_impossible_k_fails_clearly_and_keeps_finished_work(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("scenarios:\n  cifar_iid: {nfdp: {sampling: [without_replacement], k: [5000]}}\n")
    before = sorted(p for p in (tiny / "results").rglob("*.parquet"))
    proc = snakemake(tiny, "--configfile", str(TINY), str(change), data_root=data_root, check=False)
    assert proc.returncode != 0
    assert "holds n=1000 records: k=5000 without replacement is impossible" in proc.stderr
    assert all(p.exists() for p in before)
    assert not list((tiny / "results/samples/cifar_iid").glob("without_replacement-k5000/*.parquet"))
