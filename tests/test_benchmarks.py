"""The benchmark scripts stay runnable (they call pipelib's API, which moves), and the speed report covers
every architecture a preset trains."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_scripts_import_and_parse_their_arguments(script, monkeypatch, capsys):
    """Each script imports (pipelib's API moves under it) and its argument parser answers --help."""
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(sys, "argv", [script.name, "--help"])
    with pytest.raises(SystemExit) as done:
        module.main()
    assert done.value.code == 0 and "usage" in capsys.readouterr().out


@pytest.mark.parametrize("preset", ["tiny", "reduced", "paper"])
def test_the_speed_report_measures_every_trained_architecture(preset):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import speed_report
    finally:
        sys.path.pop(0)
    from pipelib import config as cfgmod

    files = [ROOT / "config.yaml"] + ([] if preset == "paper" else [ROOT / f"presets/{preset}.yaml"])
    config = cfgmod.validate(cfgmod.load(*files))
    listed = {e["arch"] for e in speed_report.trained_architectures(preset)}
    wanted = set(config["fedmd"]["architectures"]) | {config["rknn"]["student"]["arch"]}
    active = cfgmod.scenarios(config)
    wanted |= {config["ldpdl"]["student"]["arch"]}
    wanted |= {d["arch"] for d in config["ldpfl"]["datasets"].values() if d["scenario"] in active}
    wanted |= {e["arch"] for e in config["rknn"]["encoders"].values() if e.get("kind") == "simclr"}
    assert wanted <= listed


def test_the_speed_table_runs_dry_on_the_cpu_and_says_the_graph_arm_is_cuda_only():
    """The device check's speed table (issue 56) in its CPU dry mode: one small architecture for a moment,
    every column filled, the CUDA-graph arm marked as not run; a failing arm is reported, not raised."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import speed_report
    finally:
        sys.path.pop(0)
    import torch

    entry = {"method": "FedMD", "arch": "cnn2-8-16-d0.2", "shape": (1, 28, 28), "batch": 32, "classes": 16}
    entry["role"], entry["scenario"] = "party", "femnist_iid"
    lines = speed_report.training_table([entry], "dry", torch.device("cpu"), 0.05)
    header, row = lines[3], lines[5]
    assert "CUDA graph img/s" in header and header.count("|") == row.count("|")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "cnn2-8-16-d0.2" and float(cells[5].replace(",", "")) > 0 and cells[12] == "n/a (CUDA only)"
    assert speed_report._or_error(lambda: 1 / 0)[1] == "ZeroDivisionError: division by zero"


def test_the_graph_arm_turns_graphs_on_for_a_cuda_device_and_off_after(monkeypatch):
    """The CUDA-graph arm asks for a mode ``set_graphs`` accepts and leaves graphs off for the next arm (a GPU is
    not needed: the measurement itself is stood in for)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import speed_report
    finally:
        sys.path.pop(0)
    import torch

    from pipelib.train import loop

    seen = []
    monkeypatch.setattr(speed_report, "train_rate", lambda *a, **k: seen.append((loop._GRAPHS["mode"], k)) or 7.0)
    assert speed_report.graph_rate({}, torch.device("cuda"), 0.01) == 7.0
    assert seen == [("cuda", {"graph": True})] and loop._GRAPHS["mode"] == "off"


def test_the_stage_sample_reads_each_started_job_and_names_real_reduced_outputs(tmp_path):
    """benchmarks/stage_times.py: the jobs a run's console says started (rule and wildcards), and a sample
    whose every target is an output of the reduced preset (the dry-run job lists pin those paths)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import stage_times
    finally:
        sys.path.pop(0)
    log = tmp_path / "run.log"
    log.write_text(
        "Select jobs to execute...\n"
        "pipelib: start fedmd scenario=femnist_iid answer=softmax run=np (log: results/x.log)\n"
        "pipelib: fedmd scenario=femnist_iid answer=softmax run=np: 26 % of 64,160 image-passes\n"
        "pipelib: start table2 (log: results/t.log)\n"
    )
    assert stage_times.started_jobs(log) == [
        ("fedmd", {"scenario": "femnist_iid", "answer": "softmax", "run": "np"}),
        ("table2", {}),
    ]
    targets = [t for t in stage_times.TARGETS.read_text().splitlines() if t.strip() and not t.startswith("#")]
    assert len(targets) >= 10 and all(t.startswith("results/reduced/") for t in targets)


def _device_workflow():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import device_workflow
    finally:
        sys.path.pop(0)
    return device_workflow


def test_the_device_closure_carries_snakemake_and_leaves_what_the_device_holds():
    """benchmarks/device_workflow.py pack: Snakemake's closure has Snakemake and its plugin interfaces, and
    none of the packages the GPU image already holds (numpy, PyYAML) or the ILP solver it never needs."""
    names = {d.metadata["Name"].lower().replace("_", "-") for d in _device_workflow().closure(["snakemake"])}
    assert {"snakemake", "snakemake-interface-common", "yte"} <= names
    assert not names & {"numpy", "pyyaml", "pulp", "torch"}


def _device_call(tmp_path, env: dict) -> tuple[str, float]:
    """Run the generated .devsite/run.sh with stand-ins for python3 and nvidia-smi: each measurement and
    Snakemake hang until their time limit, what installs or prints returns at once.  (console, seconds)"""
    import os
    import subprocess
    import tarfile
    import time

    (tmp_path / "bin").mkdir()
    stub = '#!/bin/bash\ncase "$*" in *snakemake*|*cuda_graph_check*|*speed_report*) exec sleep 1000;; esac\n'
    for name, text in {"python3": stub, "nvidia-smi": "#!/bin/bash\necho GPU 0: stand-in\n"}.items():
        (tmp_path / "bin" / name).write_text(text)
        (tmp_path / "bin" / name).chmod(0o755)
    site = tmp_path / ".devsite"
    (site / "wheels").mkdir(parents=True)
    with tarfile.open(site / "site.tar.xz", "w:xz"):
        pass
    for name in ("targets.txt", "priority.txt", "speed_entries.json"):
        (site / name).write_text("results/x/result.json\n")
    (site / "run.sh").write_text(_device_workflow().RUN_SH.replace("{extra}", ""))
    (tmp_path / "results").mkdir()
    (tmp_path / "out").mkdir()
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "OUT": str(tmp_path / "out"), **env}
    t0 = time.perf_counter()
    run = subprocess.run(["bash", ".devsite/run.sh"], cwd=tmp_path, env=env, capture_output=True, text=True)
    return run.stdout + run.stderr, time.perf_counter() - t0


def test_the_device_call_bounds_every_step_by_its_deadline_and_packs_its_results(tmp_path):
    """.devsite/run.sh: with DEADLINE = 33 s (25 kept for packing) the graph check gets the 8 s left, the speed
    table and Snakemake nothing (never `timeout 0`, which would mean no limit), and the results are packed."""
    console, seconds = _device_call(tmp_path, {"DEADLINE": "33", "GRAPH_LIMIT": "45"})
    assert "graph check rc 124 in at most" in console, console
    assert "speed table rc" not in console and "(bound 0 s)" in console, console
    assert (tmp_path / "out" / "results.tar.gz").exists() and seconds < 25, (console, seconds)


def test_a_second_device_call_skips_the_checks_and_runs_snakemake_within_its_limit(tmp_path):
    """SKIP_CHECKS=1 (the call that finishes a row): no graph check or speed table; Snakemake gets LIMIT."""
    console, seconds = _device_call(tmp_path, {"SKIP_CHECKS": "1", "LIMIT": "3"})
    assert "graph check" not in console and "snakemake rc 124 after" in console and "(bound 3 s)" in console
    assert (tmp_path / "out" / "results.tar.gz").exists() and seconds < 15, (console, seconds)


def test_the_committed_device_page_is_what_its_script_writes_from_its_rows(tmp_path):
    """docs/reproduction/gpu-ldpfl: its README.md is generated from the result rows beside it (rows
    change, the page follows), and its Table 1 rows are the paper preset's MNIST and Fashion-MNIST ones."""
    import shutil

    folder = ROOT / "docs" / "reproduction" / "gpu-ldpfl"
    copy = tmp_path / folder.name
    shutil.copytree(folder / "results", copy / "results")
    title = (folder / "README.md").read_text().splitlines()[2].removeprefix("# ")
    args = {"folder": str(copy), "title": title, "configfile": [], "paper": "001", "command": ""}
    assert _device_workflow().page(type("Args", (), args)) == (folder / "README.md").read_text()
    table = (copy / "table_ldpfl.csv").read_text()
    assert table.count("MNIST,") == 10 and "fedcnn-32-64-512" in table and "fedcnn-16-32-128" not in table
    # Figures 3-5 drawn from the same rows, and paper 001's claims checked on them as committed
    assert {p.name for p in (copy / "figures").glob("*.csv")} == {
        f"p001_{n}.csv" for n in ("clients", "epsilon", "fraction_rounds")
    }
    claims = pd.read_csv(copy / "claims.csv")
    assert claims.equals(pd.read_csv(folder / "claims.csv")) and set(claims["paper"]) == {1}
    cifar = claims[claims["id"].str.contains("cifar10")]
    assert len(cifar) == 8 and set(cifar["verdict"]) == {"untested"}  # no CIFAR-10 row on this page
    assert set(claims["verdict"]) > {"untested", "holds"}


def test_the_committed_ldpdl_device_page_is_what_its_script_writes_from_its_rows(tmp_path):
    """docs/reproduction/gpu-ldpdl: README.md, table_ldpdl.csv and claims.csv follow from the rows beside
    them: paper 004's Table 1 on MNIST (LDP-DL and PATE at epsilon 5 and 8) with the paper's ResNet18 student,
    the four rows with their guarantees, and the one claim those rows test."""
    import re
    import shutil

    folder = ROOT / "docs" / "reproduction" / "gpu-ldpdl"
    copy = tmp_path / folder.name
    shutil.copytree(folder / "results", copy / "results")
    text = (folder / "README.md").read_text()
    command = re.search(r"^Command: `(.*)`", text, re.M).group(1)
    title = text.splitlines()[2].removeprefix("# ")
    args = {"folder": str(copy), "title": title, "configfile": [], "paper": "004", "command": command}
    assert _device_workflow().page(type("Args", (), args)) == text
    table = pd.read_csv(copy / "table_ldpdl.csv")
    run = table[table["run"] == "run"]
    assert sorted(run["method"]) == ["LDP-DL", "LDP-DL", "PATE", "PATE"] and set(run["dataset"]) == {"MNIST"}
    assert set(run["preset"]) == {"paper"} and run["hardware"].str.startswith("GPU").all()
    ldpdl = run[run["method"] == "LDP-DL"]
    assert sorted(ldpdl["epsilon_owner"]) == [5.0, 8.0] and set(ldpdl["delta"]) == {0.0}
    claims = pd.read_csv(copy / "claims.csv")
    assert claims.equals(pd.read_csv(folder / "claims.csv")) and set(claims["paper"]) == {4}
    tested = claims[claims["verdict"] != "untested"]
    assert list(tested["id"]) == [
        "p004_ldpdl_beats_pate_same_teachers",
        "p004_table1_eps8_beats_eps5",
    ]


def test_slurm_submissions_counts_group_jobs_once_and_local_jobs_never():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import slurm_submissions
    finally:
        sys.path.pop(0)
    report = """rule fedmd:
    jobid: 1

[Sun Nov 29 03:39:46 2026] Group job nfdp (jobs in lexicogr. order):

    [Sun Nov 29 03:39:46 2026]
    rule nfdp_sample:
        jobid: 2

    [Sun Nov 29 03:39:46 2026]
    rule nfdp_ledger:
        jobid: 3

localrule table2:
    jobid: 4

rule fedmd:
    jobid: 5
"""
    c = slurm_submissions.count(report)
    assert c["submissions"] == 3 and c["group_jobs"] == {"nfdp": 1} and c["jobs_in_groups"] == 2
    assert c["ungrouped"] == {"fedmd": 2} and c["local"] == 1
    # a dry run prints local jobs as `rule`: the workflow's local rules say which
    c = slurm_submissions.count(report.replace("localrule table2", "rule table2"), {"table2"})
    assert c["submissions"] == 3 and c["local"] == 1
    assert slurm_submissions.local_rules("x\nPIPELIB_LOCALRULES:a,table2\n") == {"a", "table2"}


def test_the_cuda_graph_check_runs_the_static_path_on_the_cpu_and_passes(monkeypatch, capsys):
    """benchmarks/cuda_graph_check.py (issue 56's device check): on a CPU the captured path's buffers and
    bookkeeping without the capture, which must give the eager weights exactly."""
    spec = importlib.util.spec_from_file_location("bench_cuda_graph_check", ROOT / "benchmarks/cuda_graph_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(sys, "argv", ["cuda_graph_check.py", "--device", "cpu", "--arch", "cnn2-4-8-d0.0"])
    module.main()
    out = capsys.readouterr().out
    assert "static losses" in out and "captures: 4 " in out and out.rstrip().endswith("PASS"), out


def test_the_cuda_graph_check_compares_weights_without_the_step_counters():
    """A counter grows by one a step: counted as a change it would let weights differ by far more than they
    moved.  Weights, BatchNorm statistics and counters are judged apart."""
    spec = importlib.util.spec_from_file_location("bench_cuda_graph_check", ROOT / "benchmarks/cuda_graph_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import torch

    first = {"w": torch.zeros(3), "bn.running_mean": torch.zeros(2), "bn.num_batches_tracked": torch.tensor(0)}
    eager = {"w": torch.full((3,), 0.01), "bn.running_mean": torch.ones(2), "bn.num_batches_tracked": torch.tensor(36)}
    graphed = {**eager, "w": torch.full((3,), 0.005)}
    weights, statistics, counters = module.compare(first, eager, graphed, {"bn.running_mean", "bn.num_batches_tracked"})
    assert weights == pytest.approx(0.5) and statistics == 0 and counters
    stale = {**eager, "bn.num_batches_tracked": torch.tensor(35)}
    assert module.compare(first, eager, stale, {"bn.running_mean", "bn.num_batches_tracked"}) == (0.0, 0.0, False)


def test_the_ceilings_noise_arm_is_the_runs_mechanism_at_each_owners_epsilon_keyed_and_unbiased():
    """benchmarks/ldpdl_ceilings.py --through-noise: each answer goes through the run's PM at its owner's
    per-answer epsilon (the total over the owner's load), noise keyed by the key (same key, same draw; another,
    another), and the server's estimate is unbiased: over many owners it returns the answers' mean."""
    import numpy as np

    from pipelib.methods import ldpdl
    from pipelib.privacy import soft_label
    from pipelib.seeding import rng

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import ldpdl_ceilings
    finally:
        sys.path.pop(0)
    k, n = 4, 20_000
    answers = np.zeros((2, n, k))
    answers[0, : n * 3 // 4, 0] = 1  # query 0: 3/4 say class 0, 1/4 class 2
    answers[0, n * 3 // 4 :, 2] = 1
    answers[1, :, 3] = 1
    owners = np.arange(2 * n).reshape(2, n)
    even = {"total_epsilon": 4.0, "loads": [2] * (2 * n)}  # every owner 2 answers: epsilon 2 each
    a = ldpdl_ceilings.through_noise(answers, owners, even, "pm", 0, "run")
    by_hand = soft_label.sanitize("pm", answers.reshape(-1, k), 2.0, rng(0, "ldpdl-ceilings", "run"))
    assert np.array_equal(a, ldpdl.server_targets(by_hand.reshape(2, n, k)))  # PM, epsilon 2, that key
    assert not np.array_equal(a, ldpdl_ceilings.through_noise(answers, owners, even, "pm", 0, "another run"))
    assert not np.array_equal(a, ldpdl_ceilings.through_noise(answers, owners, even, "pm", 1, "run"))
    assert a.shape == (2, k) and np.allclose(a.sum(1), 1)
    # a one-hot answer's coordinates sit at +-1 of the box, where PM at epsilon 2 (m = 1 of k = 4 reported, x 4)
    # has std 2.8 on the box, 1.4 on probabilities: the mean of 20,000 is within 0.01 (std); 0.05 is 5 sigma
    assert np.abs(a - answers.mean(1)).max() < 0.05, a
    mixed = answers[:, n * 3 // 4 - 15 : n * 3 // 4 + 15]  # 30 answers, half class 0 and half class 2
    noisy = ldpdl_ceilings.through_noise(mixed, owners[:, :30], even, "pm", 0, "run")
    assert np.abs(noisy - mixed.mean(1)).max() > 1e-3  # 30 answers: the noise shows
    # uneven loads: each answer at its own owner's epsilon (4 / 1 for owners of load 1, 4 / 2 for load 2)
    uneven = {"total_epsilon": 4.0, "loads": [1, 2] * n}
    b = ldpdl_ceilings.through_noise(answers, owners, uneven, "pm", 0, "run")
    eps = np.where(owners.ravel() % 2 == 0, 4.0, 2.0)
    g, out = rng(0, "ldpdl-ceilings", "run"), np.empty((2 * n, k))
    for e in (2.0, 4.0):
        out[eps == e] = soft_label.sanitize("pm", answers.reshape(-1, k)[eps == e], e, g)
    assert np.array_equal(b, ldpdl.server_targets(out.reshape(2, n, k)))
