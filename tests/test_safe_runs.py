"""The newcomer's path and safe re-runs: the main command on a CPU-only machine, bad input that fails
before any job and keeps what was computed, damaged files, presets that do not collide, the console."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, TINY, job_counts, snakemake
from helpers import SNAKEMAKE as SNAKEMAKE_CMD

pytestmark = pytest.mark.workflow

MNIST = "results/tiny/data/mnist/class_counts.csv"


def mnist_root(tmp_path, name="data"):
    root = tmp_path / name
    shutil.copytree(
        Path(os.environ.get("PIPELIB_DATA_ROOT", REPO.parent / "shared" / "data")) / "MNIST", root / "MNIST"
    )
    return root


def test_identical_copy_of_the_data_root_reruns_nothing(data_root, tmp_path):
    """The raw data are tracked by content: the same bytes in another folder re-run nothing."""
    work = tmp_path / "work"
    snakemake(work, data_root=mnist_root(tmp_path, "a"), targets=[MNIST])
    out = snakemake(work, "-n", data_root=mnist_root(tmp_path, "b"), targets=[MNIST])
    assert "Nothing to be done" in out.stdout + out.stderr, out.stdout[-2000:]


def test_a_damaged_data_root_after_a_good_run_keeps_the_good_outputs(data_root, tmp_path):
    """One flipped byte in a raw file: the run stops before any job, naming the file; nothing is deleted."""
    work = tmp_path / "work"
    snakemake(work, data_root=mnist_root(tmp_path, "good"), targets=[MNIST])
    outputs = {p: p.stat().st_mtime_ns for p in (work / "results/tiny/data/mnist").iterdir()}
    bad = mnist_root(tmp_path, "bad")
    raw = bad / "MNIST/raw/t10k-labels-idx1-ubyte.gz"
    data = bytearray(raw.read_bytes())
    data[100] ^= 0xFF
    raw.write_bytes(bytes(data))
    proc = snakemake(work, data_root=bad, targets=[MNIST], check=False)
    assert proc.returncode != 0
    assert f"checksum mismatch for {raw}" in proc.stderr and "No job was started" in proc.stderr
    assert {p: p.stat().st_mtime_ns for p in (work / "results/tiny/data/mnist").iterdir()} == outputs


def test_a_truncated_raw_file_without_checksums_is_named_and_keeps_the_ingest(data_root, tmp_path):
    """verify_checksums: false, and a raw MNIST file cut short (its mtime restored): a forced ingest gave a
    bare EOFError after Snakemake had deleted its outputs; the pre-flight check now reads the raw files of
    the ingests about to run, names the file and deletes nothing."""
    work = tmp_path / "work"
    root = mnist_root(tmp_path, "cut")
    off = tmp_path / "off.yaml"
    off.write_text("verify_checksums: false\n")
    off = ["--configfile", str(TINY), str(off)]
    snakemake(work, *off, data_root=root, targets=[MNIST])
    outputs = {p: p.stat().st_mtime_ns for p in (work / "results/tiny/data/mnist").iterdir()}
    raw = root / "MNIST/raw/t10k-images-idx3-ubyte.gz"
    stat = raw.stat()
    raw.write_bytes(raw.read_bytes()[:5000])
    os.utime(raw, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    proc = snakemake(work, *off, "--forcerun", "ingest", data_root=root, targets=[MNIST], check=False)
    assert proc.returncode != 0 and "nothing was run and nothing deleted" in proc.stderr, proc.stderr[-2000:]
    assert f"{raw.resolve()}: EOFError" in proc.stderr and "restore: copy it again" in proc.stderr
    assert {p: p.stat().st_mtime_ns for p in (work / "results/tiny/data/mnist").iterdir()} == outputs


def test_a_device_this_machine_lacks_fails_before_any_job(data_root, tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    config = ["--config", "fedmd={device: cuda}", f"data_root={data_root}"]  # one --config: a second replaces it
    proc = snakemake(tmp_path, *config, targets=[MNIST], check=False)
    assert proc.returncode != 0 and "fedmd.device = cuda, but torch sees no CUDA GPU" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


def test_the_main_command_stops_on_a_cpu_only_machine(data_root, tmp_path):
    """`snakemake --cores 8 results/table2.csv` (the paper preset) without a GPU: the planned compute per
    stage, then a stop before any job with the estimate and the commands to run instead."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: the paper preset runs")
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "results/table2.csv",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(tmp_path),
        "--cores",
        "8",
        "--config",
        f"data_root={data_root}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode != 0
    err = proc.stderr
    assert "planned training of this run (preset paper" in err
    for stage in ("pretrain", "fedmd", "centralized"):
        assert f"\n  {stage} " in err
    assert "stopping before the first job" in err and "days on this machine" in err and "Nothing was started" in err
    assert "results/reduced/table2.csv --configfile presets/reduced.yaml" in err
    assert "--config max_cpu_hours=0" in err and "--cores 8 but this machine has" in err
    assert not (tmp_path / "results").exists()  # no job ran


def test_a_yaml_syntax_error_names_the_file_line_and_column(tmp_path, data_root):
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: 1\nscenarios:\n  femnist_iid: {parties: 3\nfoo: bar\n")
    proc = snakemake(tmp_path, "-n", "--configfile", str(TINY), str(bad), data_root=data_root, check=False)
    assert proc.returncode != 0
    assert f"{bad}: YAML syntax error at line 4, column" in proc.stdout + proc.stderr, proc.stderr[-1500:]


def verify(work, folder="results/tiny"):
    return subprocess.run(
        [Path(sys.executable).parent / "pipelib", "verify", folder], cwd=work, capture_output=True, text=True
    )


def hints(text: str) -> list[str]:
    return [line.split(": ", 1)[1] for line in text.splitlines() if line.strip().startswith(("rebuild:", "build:"))]


def stamps(folder: Path) -> dict:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def damage(path: Path, data: bytes) -> None:
    """Overwrite ``path`` keeping its modification time (so that Snakemake sees nothing)."""
    stat = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_damaged_parquet_stops_the_run_before_any_job_and_its_hint_rebuilds_it(tiny, data_root, tmp_path):
    """A truncated intermediate (its modification time restored, so Snakemake sees nothing) is named by
    `pipelib verify` and by the pre-flight check of a run that would read it, which stops before the job
    (whose outputs Snakemake would have deleted); the printed commands rebuild it."""
    work = tmp_path / "work"
    shutil.copytree(tiny, work, symlinks=True)
    table = work / "results/tiny/partitions/femnist_iid/party-1.parquet"
    damage(table, table.read_bytes()[:300])
    proc = verify(work)
    assert proc.returncode == 1
    assert "results/tiny/partitions/femnist_iid/party-1.parquet: cannot read" in proc.stdout
    sample = work / "results/tiny/samples/femnist_iid/with_replacement-k16"
    before = stamps(sample)
    target = "results/tiny/samples/femnist_iid/with_replacement-k16/party-1.parquet"
    proc = snakemake(work, "--forcerun", "nfdp_sample", data_root=data_root, check=False, targets=[target])
    assert proc.returncode != 0 and "nothing was run and nothing deleted" in proc.stderr, proc.stderr[-2000:]
    assert "results/tiny/partitions/femnist_iid/party-1.parquet: " in proc.stderr
    assert stamps(sample) == before  # the job that would have read it did not start: its outputs are kept
    (hint,) = [h for h in hints(proc.stderr)]
    assert shlex.split(hint)[1:5] == ["results/tiny/partitions/femnist_iid/party-1.parquet", "--cores", "2", "--force"]
    assert "--configfile" in hint and f"data_root={data_root}" in hint
    assert shlex.split(hint)[shlex.split(hint).index("--directory") + 1] == str(work.resolve())
    # typed where the user started (this run was started with --directory): it rebuilds the file in work/
    stray = REPO / "results/tiny/partitions/femnist_iid/party-1.parquet"
    stamp = stray.stat().st_mtime_ns if stray.exists() else None
    subprocess.run(shlex.split(hint), cwd=REPO, check=True, capture_output=True)
    from pipelib import integrity

    assert integrity.quick_check(table) is None and (stray.stat().st_mtime_ns if stray.exists() else None) == stamp
    snakemake(work, data_root=data_root)  # what depends on it re-runs
    out = verify(work)
    assert out.returncode == 0, out.stdout


def test_a_damaged_result_json_keeps_the_tables_made_from_it(tiny, data_root, tmp_path):
    """The issue's reproduction: `echo '{"x' > result.json`, then the table target.  Without the
    pre-flight check Snakemake deleted table2.csv and table2_rounds.parquet before the table job failed."""
    work = tmp_path / "work"
    shutil.copytree(tiny, work, symlinks=True)
    row = work / "results/tiny/fedmd/cifar_iid/softmax/np/result.json"
    row.write_text('{"x\n')
    tables = {p: p.stat().st_mtime_ns for p in work.glob("results/tiny/table2*")}
    proc = snakemake(work, data_root=data_root, check=False, targets=["results/tiny/table2.csv"])
    assert (
        proc.returncode != 0 and "results/tiny/fedmd/cifar_iid/softmax/np/result.json: JSONDecodeError" in proc.stderr
    )
    assert {p: p.stat().st_mtime_ns for p in work.glob("results/tiny/table2*")} == tables and len(tables) == 2
    # verify lists every problem in one pass: the damaged row, a damaged parquet (the same run's history), a
    # deleted table
    history = row.with_name("rounds.parquet")
    damage(history, history.read_bytes()[:1000])
    (work / "results/tiny/table3.csv").unlink()
    proc = verify(work)
    assert proc.returncode == 1
    for named in ("fedmd/cifar_iid/softmax/np/result.json: ", "np/rounds.parquet: ", "table3.csv: missing"):
        assert named in proc.stdout, (named, proc.stdout[-3000:])
    # each problem's command rebuilds its file (tested alone in the test above); here their one-call form,
    # which rebuilds them all at once
    together = [line.split(": ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("  all at once: ")]
    assert len(together) == 1 and len(hints(proc.stdout)) >= 3
    subprocess.run(shlex.split(together[0]), cwd=work, check=True, capture_output=True)
    snakemake(work, data_root=data_root)
    out = verify(work)
    assert out.returncode == 0, out.stdout


def test_damage_that_keeps_a_file_readable_is_named_before_anything_is_deleted(tiny, data_root, tmp_path):
    """Damage inside a valid file (mtimes restored): 8 KB zeroed inside a Parquet table, 256 bytes of 0xFF
    inside a pre-trained model's tensor, `{}` in a result.json.  Each was read silently or crashed a job
    after Snakemake had deleted its outputs; now the pre-flight check names each file (content hash
    recorded at the write, zip CRC, result schema), nothing is deleted, and `pipelib verify` lists all
    three."""
    work = tmp_path / "work"
    shutil.copytree(tiny, work, symlinks=True)
    res = work / "results/tiny"
    test = res / "partitions/cifar_iid/test.parquet"
    data = bytearray(test.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 8192] = bytes(8192)
    damage(test, bytes(data))
    model = res / "pretrain/cifar10/cnn2-8-16-d0.2-c16.pt"
    data = bytearray(model.read_bytes())
    import zipfile

    with zipfile.ZipFile(model) as z:
        tensor = next(i for i in z.infolist() if "/data/" in i.filename and i.file_size >= 256)
    at = tensor.header_offset  # the member's data starts after its local header (name and padding lengths)
    start = (
        at + 30 + int.from_bytes(data[at + 26 : at + 28], "little") + int.from_bytes(data[at + 28 : at + 30], "little")
    )
    data[start : start + 256] = b"\xff" * 256
    damage(model, bytes(data))
    row = res / "fedmd/cifar_iid/softmax/ldp-with_replacement-k16/result.json"
    row.write_text("{}")  # as the reproduction: written by hand (a new mtime), so table2 re-runs
    kept = {p: p.stat().st_mtime_ns for p in [*res.glob("table2*"), *res.glob("fedmd/cifar_iid/softmax/np/*")]}
    proc = snakemake(work, data_root=data_root, check=False, targets=["results/tiny/table2.csv"])
    assert proc.returncode != 0 and "nothing was run and nothing deleted" in proc.stderr, proc.stderr[-2000:]
    assert "ldp-with_replacement-k16/result.json: not a result row: it lacks method" in proc.stderr
    target = "results/tiny/fedmd/cifar_iid/softmax/np/result.json"
    proc = snakemake(work, "--forcerun", "fedmd", data_root=data_root, check=False, targets=[target])
    assert proc.returncode != 0 and "nothing was run and nothing deleted" in proc.stderr, proc.stderr[-2000:]
    assert "partitions/cifar_iid/test.parquet: its content differs from what its job wrote" in proc.stderr
    assert "pretrain/cifar10/cnn2-8-16-d0.2-c16.pt: member " in proc.stderr and "fails its CRC check" in proc.stderr
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    out = verify(work)
    assert out.returncode == 1
    for named in ("test.parquet: ", "cnn2-8-16-d0.2-c16.pt: ", "ldp-with_replacement-k16/result.json: not a result"):
        assert named in out.stdout, (named, out.stdout[-3000:])


def test_verify_passes_a_whole_run(tiny):
    proc = verify(tiny)
    assert proc.returncode == 0 and "all readable and consistent" in proc.stdout, proc.stdout
    assert "expected outputs present" in proc.stdout


def test_verify_refuses_what_is_not_a_results_folder(tiny, tmp_path):
    for folder in (REPO / "src", tmp_path):
        proc = verify(tiny, str(folder))
        assert proc.returncode == 2 and "not a pipelib results folder" in proc.stdout, proc.stdout


def test_what_deleting_an_intermediate_does(tiny, data_root):
    """Snakemake keeps a later target that is up to date when an intermediate it was made from is
    deleted (so that temporary files may go): asking for the table does nothing; asking for the deleted
    file rebuilds it, and the table re-runs on its next request (its input is newer).  docs/running.md
    says so; `pipelib verify` names the missing file, not another row's."""
    row = tiny / "results/tiny/fedmd/femnist_iid/softmax/np"
    saved = (row / "result.json").read_bytes()
    (row / "result.json").unlink()
    try:
        out = snakemake(tiny, "-n", data_root=data_root, targets=["results/tiny/table2.csv"])
        assert "Nothing to be done" in out.stdout + out.stderr
        out = snakemake(tiny, "-n", data_root=data_root, targets=[str(row.relative_to(tiny) / "result.json")])
        assert job_counts(out.stdout) == {"fedmd": 1}
        proc = verify(tiny)
        assert proc.returncode == 1 and "results/tiny/fedmd/femnist_iid/softmax/np/result.json: missing" in proc.stdout
        assert "FedMD-NP k=1215: its result.json is missing" in proc.stdout and "differs" not in proc.stdout
    finally:
        (row / "result.json").write_bytes(saved)
        os.utime(row / "result.json", ns=((row / "rounds.parquet").stat().st_atime_ns,) * 2)


def test_k_above_a_partys_records_fails_before_any_job(tiny, data_root):
    """Sampling without replacement of more records than a party holds: the dry run and check-config stop
    with the key, once the partition exists."""
    bad = tiny / "k-too-large.yaml"
    bad.write_text("scenarios:\n  cifar_iid: {nfdp: {sampling: [without_replacement], k: [16, 100000]}}\n")
    proc = snakemake(tiny, "-n", "--configfile", str(TINY), str(bad), data_root=data_root, check=False)
    message = "config key scenarios.cifar_iid.nfdp: NFDP sampling without replacement of k = 100000 records"
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr
    cli = subprocess.run(
        [Path(sys.executable).parent / "pipelib", "check-config", str(REPO / "config.yaml"), str(TINY), str(bad)],
        cwd=tiny,
        capture_output=True,
        text=True,
    )
    assert cli.returncode != 0 and message in cli.stderr, cli.stderr


def test_presets_keep_to_their_own_results_folder(tiny):
    """Each preset writes under its results_dir (tiny: results/tiny): a paper or reduced run in the same
    folder never touches the tiny outputs."""
    top = {p.name for p in (tiny / "results").iterdir()}
    assert top == {"tiny"}
    assert (tiny / "results/tiny/table2.csv").is_file() and (tiny / "results/tiny/logs").is_dir()


def test_a_preset_can_run_fewer_scenarios(data_root, tmp_path):
    only = tmp_path / "only.yaml"
    only.write_text(
        "run: {scenarios: [rknn_mnist], table2: []}\n"
        "rknn:\n  table:\n    - {dataset: MNIST, scenario: rknn_mnist, encoder: hog, s: 20, k: 1, mechanism: none}\n"
    )
    out = snakemake(tmp_path, "-n", "--configfile", str(TINY), str(only), data_root=data_root)
    counts = job_counts(out.stdout)
    # no FedMD scenario, so no pre-training on a public dataset; FedMD runs only on the kept split (fedmd.compare)
    assert counts["partition"] == 1 and "pretrain" not in counts and counts["pretrain_pool"] == 2
    assert set(re.findall(r"output: results/tiny/fedmd/([^/]+)/", out.stdout)) == {"rknn_mnist"}
    # the Table 1 row and paper 003's Figure 2 sweeps of the one scenario; paper 002's data figures are left out
    assert counts["distill_student"] > 1 and "figure_p003_local_dp" in counts
    assert "figure_p002_rounds" not in counts and "figure_p002_accuracy_vs_parties" not in counts
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("run: {scenarios: [rknn_mnist], table2: all}\n")
    proc = snakemake(tmp_path, "-n", "--configfile", str(TINY), str(wrong), data_root=data_root, check=False)
    message = "config key table2.FEMNIST needs scenario 'femnist_iid', which run.scenarios leaves out"
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr


def test_table2_seeds_run_the_rows_again_on_repeat_scenarios(data_root, tmp_path):
    """table2.CIFAR-10.seeds = 2: the NP and NFDP rows run again on cifar_iid-s1 (its own partition and NFDP
    samples), FedMD-LDP rows and the centralized baselines once; table2 reads both runs."""
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text("table2:\n  CIFAR-10: {seeds: 2}\n")
    out = snakemake(
        tmp_path, "-n", "--configfile", str(TINY), str(seeds), data_root=data_root, targets=["results/tiny/table2.csv"]
    ).stdout
    repeats = set(re.findall(r"output: results/tiny/fedmd/cifar_iid-s1/softmax/([^/]+)/result.json", out))
    assert repeats == {"np", "nfdp-with_replacement-k16", "nfdp-with_replacement-k64"}
    assert "output: results/tiny/partitions/cifar_iid-s1/" in out and "results/tiny/samples/cifar_iid-s1/" in out
    assert "femnist_iid-s1" not in out and "centralized/cifar_iid-s1" not in out
    table2 = out[out.index("rule table2:") :].split("\n\n")[0]
    assert "results/tiny/fedmd/cifar_iid-s1/softmax/np/rounds.parquet" in table2


def test_ldpdl_table_seeds_run_every_arm_again_on_repeat_scenarios(data_root, tmp_path):
    """ldpdl.table.seeds = {MNIST: 2}: LDP-DL and both PATE arms of Table 1 run again on ldpdl_mnist-s1 (its own
    partition, owners and teachers; the teachers' encoder shared), the noise-free ceiling once; the table reads
    both runs of each arm."""
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text("ldpdl:\n  table: {seeds: {MNIST: 2}}\n")
    out = snakemake(
        tmp_path,
        "-n",
        "--configfile",
        str(TINY),
        str(seeds),
        data_root=data_root,
        targets=["results/tiny/table_ldpdl.csv"],
    ).stdout
    assert "output: results/tiny/partitions/ldpdl_mnist-s1/" in out
    assert {"teachers-L40", "teachers-T8", "teachers-S8"} <= set(
        re.findall(r"ldpdl/ldpdl_mnist-s1/(teachers-\w+)/", out)
    )
    assert "ldpdl_mnist-s1/ceiling" not in out and "encoder-mnist-s1" not in out
    table = out[out.index("rule table_ldpdl:") :].split("\n\n")[0]
    assert "results/tiny/ldpdl/ldpdl_mnist-s1/pm-eps8.0-q2-L40-aqs/iter-2/result.json" in table
    assert "results/tiny/distill/ldpdl_mnist-s1/pate-S8-q40/gnmax-eps8.0/result.json" in table


def test_the_console_is_short_with_starts_progress_and_a_summary(tiny):
    console = (tiny / "console.txt").read_text()
    assert "pipelib: start fedmd scenario=femnist_iid answer=softmax run=np" in console
    assert "pipelib: planned training of this run (preset tiny" in console
    assert "image-passes" in console and "img/s, done" in console  # each training job's progress line
    assert "pipelib: finished. Tables:" in console and "results/tiny/table2.csv (written)" in console
    assert "reason:" not in console and "resources:" not in console  # no per-job blocks
    log = (tiny / "results/tiny/logs/fedmd/femnist_iid/softmax/np.log").read_text()
    assert "FedMD np: 100 % of" in log


def test_a_no_op_rerun_is_fast_and_does_nothing(tiny, data_root):
    t0 = time.perf_counter()
    out = snakemake(tiny, data_root=data_root)
    assert "Nothing to be done" in out.stdout + out.stderr
    assert time.perf_counter() - t0 < 60


def documented_commands():
    """Every `.venv/bin/snakemake ...` line of the README's and docs/running.md's code blocks."""
    found = []
    for page in ("README.md", "docs/running.md"):
        for line in (REPO / page).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith(".venv/bin/snakemake ") and "--report" not in line:
                found.append((page, line))
    return found


@pytest.mark.parametrize("page,command", documented_commands())
def test_documented_commands_parse_and_build_their_dag(page, command, data_root, tmp_path):
    """Each command as written (argument order matters: `--configfile` swallows every path after it)
    builds its DAG in a dry run."""
    args = command.split()[1:]
    cmd = [*SNAKEMAKE_CMD, *args, "-n", "--directory", str(tmp_path), "--config", f"data_root={data_root}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, f"{page}: {command}\n{proc.stderr[-3000:]}"
    assert "Job stats" in proc.stdout + proc.stderr or "Nothing to be done" in proc.stdout + proc.stderr


def test_a_dry_run_under_a_left_lock_says_so(tiny, data_root):
    """A killed run leaves its lock: a dry run still lists the jobs, and says a real run will be refused."""
    lock = tiny / ".snakemake/locks/0.input.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    try:
        out = snakemake(tiny, "-n", data_root=data_root)
        assert "this folder is locked by another Snakemake run, or by one that was killed" in out.stderr
        assert "--unlock" in out.stderr
    finally:
        lock.unlink()
    assert "folder is locked" not in snakemake(tiny, "-n", data_root=data_root).stderr
