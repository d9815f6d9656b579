"""The workflow on a real single-node SLURM cluster, through profiles/slurm: same outputs as a local run.

cluster/start-local-slurm.sh brings up slurmctld + slurmd on this machine (installing Debian's packages
if needed); the tiny preset's privacy ledger and one FedMD row (ingest -> partition -> party tables ->
NFDP samples -> ledgers -> pre-training -> FedMD) and one LDP-DL run then run once locally and once as
SLURM jobs (the seconds-long ones in the profile's groups), and every output file must match; the reduced
preset's submissions are counted from a dry run.  Needs root and Debian's SLURM packages (or apt-get to install them);
skips otherwise.  Marker: slurm (`pytest -m "not slurm"` leaves it out).
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from helpers import SLURM_CONF

from pipelib import io

pytestmark = pytest.mark.slurm

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TINY = REPO / "presets" / "tiny.yaml"
START, STOP = REPO / "cluster" / "start-local-slurm.sh", REPO / "cluster" / "stop-local-slurm.sh"

# One NFDP ledger of the tiny preset (ingest, partition, party tables, samples, ledger of cifar_iid) and
# one FedMD row (FEMNIST's ingest and partitions, its NFDP samples and ledger, two pre-trainings, FedMD).
# And one LDP-DL run (its teachers, then plan, release and student twice: the `ldpdl` group).
TARGETS = [
    "results/tiny/samples/cifar_iid/without_replacement-k16/ledger.csv",
    "results/tiny/fedmd/femnist_iid/softmax/nfdp-with_replacement-k16/result.json",
    "results/tiny/ldpdl/femnist_iid/pm-eps8.0-q2-parties-aqs/iter-2/result.json",
]
# ingest does not use its threads; asking for 2 checks that a rule's threads reach sbatch --cpus-per-task
THREADS = ["--set-threads=ingest=2"]

# The site keys of profiles/slurm, set for the cluster of cluster/start-local-slurm.sh: its partition is
# `debug`, it has no accounts and no slurmdbd (so squeue polls job states; MinJobAge=3600 keeps finished
# jobs visible), and a short first status check keeps this test quick.
LOCAL_SITE = {
    "slurm-status-command": "squeue",
    "slurm-init-seconds-before-status-checks": 2,
    "seconds-between-status-checks": 2,
    "slurm-keep-successful-logs": True,  # the plugin's per-job logs, checked below
    "retries": 0,  # a failing job fails the test at once
    "cores": len(os.sched_getaffinity(0)),  # a group job asks at most the node's CPUs
}
PARTITION = "debug"

VOLATILE = re.compile(r"seconds|_per_s$")  # wall-clock measurements (JSON keys, Parquet columns)


def local_site_profile(dest: Path) -> Path:
    """profiles/slurm with its site keys set for the local cluster."""
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    profile.update(LOCAL_SITE)
    resources = profile["default-resources"]
    resources["slurm_partition"] = PARTITION
    del resources["slurm_account"]  # no accounts on the local cluster
    for rule in profile["set-resources"].values():
        rule["slurm_partition"] = PARTITION
        rule.pop("gpu_model", None)
    dest.mkdir(parents=True)
    (dest / "config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    return dest


def tail(text: str, n: int = 4000) -> str:
    return text[-n:]


def slurm_answers() -> bool:
    return (
        shutil.which("scontrol") is not None
        and subprocess.run(["scontrol", "ping"], capture_output=True, text=True).stdout.count("UP") > 0
    )


def debian_12() -> bool:
    try:
        release = Path("/etc/os-release").read_text()
    except OSError:
        return False
    return "ID=debian" in release and 'VERSION_ID="12"' in release


@pytest.fixture(scope="module", autouse=True)
def slurm_conf():
    """The session's SLURM configuration (SLURM_CONF), which conftest hides from the local tests."""
    with pytest.MonkeyPatch.context() as mp:
        if SLURM_CONF is None:
            mp.delenv("SLURM_CONF", raising=False)
        else:
            mp.setenv("SLURM_CONF", SLURM_CONF)
        yield


@pytest.fixture(scope="module")
def cluster():
    """A running single-node SLURM cluster; stopped afterwards if this test started it."""
    if os.geteuid() != 0:
        pytest.skip("needs root: cluster/start-local-slurm.sh installs SLURM and starts its daemons")
    if shutil.which("apt-get") is None and shutil.which("slurmctld") is None:
        pytest.skip("SLURM is not installed and there is no apt-get to install it")
    was_running = slurm_answers()
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(START)], capture_output=True, text=True, timeout=1200)
    started = time.monotonic() - t0
    out = tail(proc.stdout + proc.stderr)
    if proc.returncode in (2, 3, 5):  # not root / packages not installable / someone else's SLURM
        pytest.skip(f"cannot set up a local SLURM cluster (start-local-slurm.sh exit {proc.returncode}): {out}")
    if proc.returncode != 0:
        if debian_12():  # the supported platform (CI): the daemons must come up
            pytest.fail(f"start-local-slurm.sh failed ({proc.returncode}):\n{out}")
        pytest.skip(f"SLURM daemons did not come up on this (non-Debian-12) machine: {out}")
    print(f"local SLURM cluster up in {started:.1f} s")
    yield
    if not was_running:
        # --purge: a stopped controller behind a left slurm.conf makes `scontrol show config` wait 9 s, and
        # Snakemake's SLURM plugin runs it at every snakemake call; the start script writes its conf afresh at
        # each start (and refused to start over anyone else's), so removing it loses nothing
        stop = subprocess.run(["bash", str(STOP), "--purge"], capture_output=True, text=True, timeout=300)
        assert stop.returncode == 0, stop.stdout + stop.stderr


def snakemake(workdir: Path, data_root: Path, log: Path, *args: str) -> subprocess.Popen:
    """Start snakemake on the tiny preset in ``workdir``, its output going to ``log``."""
    cmd = [
        *SNAKEMAKE,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(TINY),
        "--config",
        f"data_root={data_root}",
        *args,
    ]
    with open(log, "w") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)


def finish(proc: subprocess.Popen, log: Path, what: str, deadline: float) -> str:
    try:
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"{what} did not finish in time:\n{tail(log.read_text())}")
    out = log.read_text()
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{tail(out, 8000)}"
    return out


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory, data_root):
    """The targets built locally and through SLURM, at the same time (the SLURM run mostly waits)."""
    base = tmp_path_factory.mktemp("slurm")
    local, remote = base / "local", base / "slurm"
    profile = local_site_profile(base / "profile")
    t0 = time.monotonic()
    on_slurm = snakemake(remote, data_root, base / "slurm.log", "--workflow-profile", str(profile), *THREADS, *TARGETS)
    try:
        on_host = snakemake(local, data_root, base / "local.log", "--cores", "2", *TARGETS)
        finish(on_host, base / "local.log", "the local run", t0 + 900)
        log = finish(on_slurm, base / "slurm.log", "the SLURM run", t0 + 1800)
    finally:
        if on_slurm.poll() is None:  # a failed local run: stop the SLURM run too (its jobs: the stop script)
            on_slurm.terminate()
            try:
                on_slurm.wait(timeout=60)
            except subprocess.TimeoutExpired:
                on_slurm.kill()
    print(f"local and SLURM runs done in {time.monotonic() - t0:.1f} s")
    return local, remote, log


def submissions(log: str) -> list[tuple[str, str, str]]:
    """(SLURM job id, what it ran: ``rule_<rule>`` or ``group_<group>``, the plugin's log) of every sbatch."""
    found = re.findall(r"Job \S+ has been submitted with SLURM jobid (\d+) \(log: (\S+)\)\.", log)
    out = []
    for job, path in found:  # the plugin's log folder: rule_<rule>/, or group_<group>_<its rules>/
        kind = re.search(r"/((?:rule|group)_\w+)/", path).group(1)
        out.append((job, kind if kind.startswith("rule_") else "_".join(kind.split("_")[:2]), path))
    return out


GROUPED = {"partition", "party_data", "nfdp_sample", "nfdp_ledger", "ldpdl_plan", "ldpdl_release", "ldpdl_student"}


def test_jobs_ran_as_slurm_jobs(runs):
    _, remote, log = runs
    submitted = submissions(log)
    finished = re.findall(r"Finished jobid: \S+ \(Rule: (\w+)\)", log)
    assert submitted, tail(log)
    assert GROUPED | {"ingest", "pretrain", "fedmd", "ldpdl_teachers"} <= set(finished), tail(log)
    # the seconds-long jobs went to SLURM in groups (profiles/slurm `groups`), never one sbatch each
    kinds = {kind for _, kind, _ in submitted}
    assert {"group_data", "group_nfdp", "group_ldpdl"} <= kinds, kinds
    assert not {f"rule_{r}" for r in GROUPED} & kinds, kinds
    assert len(submitted) < len(finished) - 10, (len(submitted), len(finished))
    ids = {job for job, _, _ in submitted}
    for _, _, slurm_log in submitted:  # the plugin's per-job log, kept by slurm-keep-successful-logs
        assert Path(slurm_log).is_file() and Path(slurm_log).resolve().is_relative_to(remote.resolve()), slurm_log
    # SLURM's own record (slurmctld keeps finished jobs for MinJobAge): every job of this run completed
    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    queue = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--format=%i|%T|%P|%C", "--name", run_id],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    record = {
        job: (state, partition, int(cpus))
        for job, state, partition, cpus in (line.split("|") for line in queue.split())
    }
    assert set(record) == ids, queue
    assert {state for state, _, _ in record.values()} == {"COMPLETED"}, queue
    assert {partition for _, partition, _ in record.values()} == {PARTITION}
    # threads -> --cpus-per-task: ingest asked for 2 CPUs (THREADS), every other single rule of tiny for 1; a
    # group asks for its widest step's, at most the profile's cores
    kind = {job: k for job, k, _ in submitted}
    assert {cpus for job, (_, _, cpus) in record.items() if kind[job] == "rule_ingest"} == {2}, (kind, record)
    singles = {
        cpus for job, (_, _, cpus) in record.items() if kind[job].startswith("rule_") and kind[job] != "rule_ingest"
    }
    assert singles == {1}, (kind, record)
    groups = [cpus for job, (_, _, cpus) in record.items() if kind[job].startswith("group_")]
    assert groups and all(1 <= c <= LOCAL_SITE["cores"] for c in groups), (kind, record)


def test_the_reduced_preset_submits_a_few_hundred_jobs():
    """benchmarks/slurm_submissions.py on the reduced preset through profiles/slurm (a dry run: no cluster):
    the groups and local rules keep it under 400 sbatch submissions (3,530 one job each on 2026-12-07)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import slurm_submissions
    finally:
        sys.path.pop(0)
    cmd = [sys.executable, "-c", slurm_submissions.CHILD, "-n", "--workflow-profile", str(REPO / "profiles" / "slurm")]
    out = subprocess.run(
        [*cmd, "--configfile", str(REPO / "presets" / "reduced.yaml")], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 0, tail(out.stdout + out.stderr)
    c = slurm_submissions.count(out.stdout, slurm_submissions.local_rules(out.stderr))
    assert c["submissions"] < 400, c
    assert c["jobs_in_groups"] > 2000 and c["local"] > 50, c
    assert not GROUPED & set(c["ungrouped"]), c["ungrouped"]


def test_slurm_job_sees_its_cpus(cluster):
    """What pipelib.train.loop.set_threads reads: SLURM_CPUS_PER_TASK is set inside a job (and its srun step)."""
    proc = subprocess.run(
        [
            "srun",
            "--partition",
            PARTITION,
            "--cpus-per-task=2",
            "--mem=100",
            "--time=1",
            "printenv",
            "SLURM_CPUS_PER_TASK",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "2", proc.stdout + proc.stderr


def same_json(a, b, path=""):
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), path
        for key in a:
            if not VOLATILE.search(key):
                same_json(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same_json(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def same_checkpoint(a: Path, b: Path):
    import torch

    def equal(x, y):
        if isinstance(x, torch.Tensor):
            return isinstance(y, torch.Tensor) and torch.equal(x, y)
        if isinstance(x, dict):  # wall-clock keys (e.g. a pre-training history's img_per_s) may differ
            return (
                isinstance(y, dict)
                and set(x) == set(y)
                and all(equal(x[k], y[k]) for k in x if not (isinstance(k, str) and VOLATILE.search(k)))
            )
        if isinstance(x, (list, tuple)):
            return isinstance(y, (list, tuple)) and len(x) == len(y) and all(map(equal, x, y))
        return x == y

    assert equal(torch.load(a, weights_only=False), torch.load(b, weights_only=False)), a


def test_outputs_equal_the_local_run(runs):
    local, remote, _ = runs
    # logs and timings differ by nature; the run's own records (its lock's holder, its run record, the content
    # hashes of files with timing columns) are checked per run below, not across runs
    skip = ("results/tiny/logs/", "results/tiny/benchmarks/", "results/tiny/.pipelib/", "results/tiny/.pipelib-run")
    files = sorted(p.relative_to(local).as_posix() for p in (local / "results").rglob("*") if p.is_file())
    files = [f for f in files if not f.startswith(skip)]
    remote_files = sorted(p.relative_to(remote).as_posix() for p in (remote / "results").rglob("*") if p.is_file())
    assert files == [f for f in remote_files if not f.startswith(skip)]
    assert set(TARGETS) <= set(files)
    kinds = set()
    for rel in files:
        a, b = local / rel, remote / rel
        kind = a.suffix
        kinds.add(kind)
        if kind == ".parquet":
            ta, tb = pq.read_table(a), pq.read_table(b)
            volatile = [c for c in ta.column_names if VOLATILE.search(c)]  # e.g. rounds.parquet's round_seconds
            assert ta.column_names == tb.column_names, rel
            assert ta.drop_columns(volatile).equals(tb.drop_columns(volatile), check_metadata=True), rel
        elif kind == ".csv":
            pd.testing.assert_frame_equal(pd.read_csv(a), pd.read_csv(b), check_exact=True, obj=rel)
        elif kind == ".json":
            same_json(json.loads(a.read_text()), json.loads(b.read_text()), rel)
        elif kind == ".pt":
            same_checkpoint(a, b)
        else:
            assert a.read_bytes() == b.read_bytes(), rel
    assert {".parquet", ".csv", ".json", ".pt"} <= kinds
    for run in (local, remote):  # each run recorded the hash of what it wrote, the SLURM job steps included
        recorded = {rel: io.recorded_hash(run / rel) for rel in files}
        assert all(recorded[rel] == io.content_hash(run / rel) for rel in TARGETS), run
        assert sum(h is not None for h in recorded.values()) >= len(TARGETS)
