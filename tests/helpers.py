"""Helpers of the workflow tests: run the real Snakefile on the tiny preset in a given directory."""

import os
import re
import subprocess
import sys
from pathlib import Path

from pipelib.stages import roles as stage_roles

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TINY = REPO / "presets" / "tiny.yaml"
SLURM_CONF = os.environ.get("SLURM_CONF")  # as the session found it (conftest hides it from the local tests)


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


def not_report(counts: dict[str, int]) -> dict[str, int]:
    """The jobs of a dry run's counts whose rule is not a report rule (pipelib.stages) or ``all``: what a
    change re-trains or re-privatizes.  A test asserts these exactly and that the rest are report rules, so a
    new table, figure or page needs no edit of the test."""
    return {rule: n for rule, n in counts.items() if rule != "all" and stage_roles().get(rule) != "report"}


def hold_folder(folder, name: str) -> subprocess.Popen:
    """A process that holds ``folder``'s run lock as a Snakemake run's onstart does (pipelib.runlock),
    described as ``name``, until it is killed; returns once the lock is held."""
    script = (
        "import sys, time; from pipelib import runlock; runlock.hold(sys.argv[1], [sys.argv[2]]); "
        "print('held', flush=True); time.sleep(300)"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(folder), name], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc
