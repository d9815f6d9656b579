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

from pipelib.privacy.nfdp import nfdp

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TINY = REPO / "presets" / "tiny.yaml"


def snakemake(workdir, *args, data_root=None, check=True, targets=(), env=None):
    cmd = [
        *SNAKEMAKE,
        *targets,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--cores",
        "2",
        "--configfile",
        str(TINY),
        *args,
    ]
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
    assert set(parts["scenario"]) == {
        "femnist_iid",
        "femnist_noniid",
        "cifar_iid",
        "cifar_noniid",
        "rknn_mnist",
        "rknn_cifar10",
    }
    assert (parts[parts.role == "party"].groupby("scenario").size() == 3).all()
    for scenario in parts["scenario"].unique():
        for party in range(3):
            assert (tiny / f"results/partitions/{scenario}/party-{party}.parquet").is_file()


def test_ledger_equals_theorems(tiny):
    ledger = pd.read_csv(tiny / "results" / "privacy_ledger.csv")
    assert {"party", "n", "k", "sampling", "epsilon", "delta", "epsilon_log10", "delta_vacuous"} <= set(ledger)
    ledger = ledger[ledger.method == "FedMD-NFDP"]
    assert len(ledger) == 3 * 7  # 7 (scenario, sampling, k) combinations of the tiny preset, 3 parties each
    for row in ledger.itertuples():
        g = nfdp(row.n, row.k, row.sampling)
        assert row.epsilon == pytest.approx(g.epsilon, rel=1e-12)
        assert row.delta == pytest.approx(g.delta, rel=1e-12)
        assert row.epsilon_log10 == pytest.approx(g.epsilon / np.log(10), rel=1e-12)
        assert bool(row.delta_vacuous) == (g.delta >= 1 / row.n)
    assert (ledger["preset"] == "tiny").all()


def test_party_n_matches_ledger_and_samples_come_from_the_party(tiny):
    ledger = pd.read_csv(tiny / "results/samples/femnist_iid/without_replacement-k16/ledger.csv")
    for party in range(3):
        own = pq.read_table(tiny / f"results/partitions/femnist_iid/party-{party}.parquet").to_pandas()
        sample_path = tiny / f"results/samples/femnist_iid/without_replacement-k16/party-{party}.parquet"
        sample = pq.read_table(sample_path).to_pandas()
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
    new = re.findall(r"output: (results/samples/\S+)", out.stdout)
    assert new and all("femnist_noniid/with_replacement-k8/" in p for p in new)


def test_changing_one_table2_k_reruns_only_that_row(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("table2:\n  FEMNIST: {k: [16, 32]}\n")
    out = snakemake(tiny, "-n", "--configfile", str(TINY), str(change), data_root=data_root)
    assert job_counts(out.stdout) == {
        "nfdp_sample": 3,
        "nfdp_ledger": 1,
        "fedmd": 1,
        "table2": 1,
        "privacy_ledger": 1,
        "compare": 1,
        "reproduction_pages": 1,
        "all": 1,
    }
    assert "results/fedmd/femnist_iid/softmax/nfdp-with_replacement-k32/result.json" in out.stdout


TABLE2_COLUMNS = [
    "dataset",
    "method",
    "k",
    "n",
    "sampling",
    "epsilon",
    "delta",
    "epsilon_log10",
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


PRIVATE = re.compile(
    r"results/partitions/[^/]+/party-\d+\.parquet|results/samples/.*/party-\d+\.parquet"
    r"|/answers/party-\d+|results/represent/[^/]+/[^/]+/party-\d+\.npy"
)
PARTY_RULES = {"nfdp_sample", "embed_party", "distill_answers", "distill_release"}
SERVER_RULES = {
    "distill_aggregate",
    "distill_label",
    "distill_student",
    "table_rknn",
    "table2",
    "nfdp_ledger",
    "privacy_ledger",
    "partition_summary",
    "cluster",
    "embed_public",
    "train_encoder",
    "compare",
}


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
    assert {rule for rule, _, _ in jobs} >= PARTY_RULES | SERVER_RULES | {"distill_curate", "fedmd"}
    for rule, inputs, outputs in jobs:
        if rule in PARTY_RULES:
            party = {re.search(r"party-(\d+)", o).group(1) for o in outputs}
            assert len(party) == 1, (rule, outputs)
            for i in inputs:
                m = re.search(r"party-(\d+)", i)
                assert m is None or {m.group(1)} == party, (rule, i, outputs)
        if rule in SERVER_RULES:
            assert not [i for i in inputs if PRIVATE.search(i)], (rule, inputs)
        if rule == "distill_curate":  # the trusted curator of central DP reads raw votes, nothing else private
            assert all("/answers/party-" in i for i in inputs), inputs


def test_table_rknn(tiny):
    t = pd.read_csv(tiny / "results" / "table_rknn.csv")
    assert list(t.columns[:17]) == [
        "dataset",
        "scenario",
        "encoder",
        "s",
        "k",
        "mechanism",
        "epsilon",
        "delta",
        "adjacency",
        "label_accuracy",
        "accuracy",
        "paper_accuracy",
        "paper_label_accuracy",
        "n",
        "accountant",
        "protected_unit",
        "preset",
    ]
    assert len(t) == 6 and (t["preset"] == "tiny").all()
    mnist = t[t.scenario == "rknn_mnist"]
    assert mnist["label_accuracy"].between(0.3, 1).all() and (mnist["accuracy"] > 0.3).all()  # chance: 0.1
    assert np.isnan(t.loc[t.scenario == "femnist_iid", "label_accuracy"]).all()  # public labels of another space
    assert (t.loc[t.mechanism != "none", "delta"] == 0).all()
    assert (t.loc[t.mechanism == "none", "epsilon"] == np.inf).all()
    noisy = pq.read_table(tiny / "results/distill/rknn_mnist/rknn-hog-s20-k1/laplace-eps1.0/labels.parquet").to_pandas()
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


def test_impossible_k_fails_clearly_and_keeps_finished_work(tiny, data_root, tmp_path):
    change = tmp_path / "k.yaml"
    change.write_text("scenarios:\n  cifar_iid: {nfdp: {sampling: [without_replacement], k: [5000]}}\n")
    before = sorted(p for p in (tiny / "results").rglob("*.parquet"))
    proc = snakemake(tiny, "--configfile", str(TINY), str(change), data_root=data_root, check=False)
    assert proc.returncode != 0
    assert "holds n=1000 records: k=5000 without replacement is impossible" in proc.stderr
    assert all(p.exists() for p in before)
    assert not list((tiny / "results/samples/cifar_iid").glob("without_replacement-k5000/*.parquet"))


# ------------------------------------------------------------------ one shape for many methods

GOLDEN = Path(__file__).resolve().parent / "golden" / "tiny"
VOLATILE = re.compile(r"seconds$|_per_s$|^hardware$|^device$")  # timings and where the jobs ran


@pytest.mark.parametrize("table", ["table2.csv", "table_rknn.csv"])
def test_tiny_tables_are_pinned(tiny, table):
    """Every value of the tiny preset's paper tables, except timings and hardware, equals the pinned copy: a refactor
    that changes a number fails here (refresh tests/golden/tiny only for an intended change)."""
    got, want = pd.read_csv(tiny / "results" / table), pd.read_csv(GOLDEN / table)
    assert list(got.columns) == list(want.columns)
    keep = [c for c in got.columns if not VOLATILE.search(c)]
    pd.testing.assert_frame_equal(got[keep], want[keep], check_exact=True, obj=table)


def test_ledger_lists_every_privatized_release(tiny):
    ledger = pd.read_csv(tiny / "results" / "privacy_ledger.csv")
    assert set(ledger["method"]) == {"FedMD-NFDP", "FedMD-LDP", "reverse k-NN"}
    assert set(ledger.loc[ledger.method == "reverse k-NN", "mechanism"]) == {"none", "laplace", "rr", "collision"}
    assert ledger[["adjacency", "protected_unit", "accountant", "releases"]].notna().all().all()
    ldp = ledger[ledger.method == "FedMD-LDP"]
    assert len(ldp) == 2 * 3 and (ldp["sigma"] > 0).all()  # one release per party of each LDP row
    local = ledger[ledger.mechanism.isin(["rr", "collision"])]
    assert (local["party"] >= 0).all() and (local["adjacency"] == "any two inputs of a local randomizer").all()
    assert (ledger.loc[ledger.mechanism == "laplace", "party"] == -1).all()  # the curator's release


def test_compare_holds_every_method_in_one_schema(tiny):
    from pipelib.schema import RESULT_COLUMNS

    rows = pd.read_csv(tiny / "results" / "compare.csv")
    assert list(rows.columns[: len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    assert set(rows["method"]) == {"FedMD-NP", "FedMD-NFDP", "FedMD-LDP", "Centralized", "reverse k-NN"}
    needed = ["epsilon", "delta", "adjacency", "accountant", "accuracy", "n", "preset", "device"]
    assert rows[needed].notna().all().all()
    t2 = pd.read_csv(tiny / "results" / "table2.csv")
    fedmd = rows[rows.method.str.startswith("FedMD")]
    assert sorted(fedmd["accuracy"]) == sorted(t2.loc[t2.method != "Centralized", "accuracy"])


def test_every_training_stage_keeps_its_final_model(tiny):
    import torch

    models = {p.relative_to(tiny).as_posix() for p in (tiny / "results").rglob("*.pt") if "resume" not in p.name}
    assert {m for m in models if m.endswith("/models.pt")} and {m for m in models if m.endswith("/student.pt")}
    assert {m for m in models if m.startswith("results/centralized/") and m.endswith("/model.pt")}
    parties = torch.load(tiny / "results/fedmd/femnist_iid/softmax/np/models.pt", weights_only=False)
    assert [p["party"] for p in parties] == [0, 1, 2] and all("state_dict" in p for p in parties)
    assert not list((tiny / "results").rglob("*resume.pt"))  # checkpoints are gone once a job finished


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
    assert job_counts(out.stdout) == {
        "partition_summary": 1,
        "privacy_ledger": 1,
        "table2": 1,
        "table_rknn": 1,
        "compare": 1,
        "reproduction_pages": 1,  # downstream of table2 and table_rknn
        "all": 1,
    }


def test_reproduction_pages_are_generated_from_the_tables(tiny):
    t2 = pd.read_csv(tiny / "results" / "table2.csv")
    page = (tiny / "docs/reproduction/tiny/table2.md").read_text()
    assert page.startswith("<!-- generated by the workflow's reproduction_pages rule")
    assert "Preset: tiny" in page and "hardware of the jobs: CPU" in page
    for r in t2.itertuples():  # every row's accuracy, as printed
        assert f"{r.accuracy:.4f} ± {r.accuracy_std:.4f}" in page
    headline = (tiny / "docs/reproduction/tiny/headline.md").read_text()
    table_lines = [line for line in headline.splitlines() if line.startswith("| ")]  # header and rows
    assert len(table_lines) == len(t2) + 1 + len(pd.read_csv(tiny / "results/table_rknn.csv")) + 1
