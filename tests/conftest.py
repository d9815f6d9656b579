"""Shared fixtures: the offline data root (../shared/data beside the checkout, or $PIPELIB_DATA_ROOT).

Tests run in groups: lint first, then the fast unit tests, then the workflow on the tiny preset
(``workflow``), then the local SLURM cluster (``slurm``); ``pytest -m "not workflow and not slurm"`` runs the
lint and unit tests alone.  A lint or unit failure stops the run before the workflow group (minutes, not
the half hour the workflow takes): fix it first.
"""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests' helpers module
from helpers import snakemake  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA_ROOT = Path(os.environ.get("PIPELIB_DATA_ROOT", REPO.parent / "shared" / "data")).resolve()

# Every `snakemake` command imports the SLURM executor plugin, which runs `scontrol show config` at import
# (snakemake-executor-plugin-slurm 2.8.0): behind a slurm.conf whose controller is down (one left by an
# interrupted SLURM test) that waits 9 s, on each of the suite's commands.  The tests before the
# SLURM group never use SLURM, so they read no SLURM configuration; tests/test_slurm.py restores the session's.
os.environ["SLURM_CONF"] = os.devnull
GROUPS = ("workflow", "slurm")


def group(item) -> int:
    """0: lint, 1: unit tests, then one per GROUPS entry."""
    if item.path.name == "test_lint.py":
        return 0
    return next((i + 2 for i, g in enumerate(GROUPS) if item.get_closest_marker(g)), 1)


def pytest_collection_modifyitems(config, items):
    """Lint first, then the unit tests, then the workflow tests, then the SLURM tests (stable within a group)."""
    items.sort(key=group)


FAILED_FAST = []  # the lint and unit tests that failed


def pytest_runtest_makereport(item, call):
    failed = call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception)
    if failed and call.when in ("setup", "call") and group(item) <= 1:
        FAILED_FAST.append(item.nodeid)


def pytest_runtest_setup(item):
    """The first workflow or SLURM test ends the session if a lint or unit test failed (each named)."""
    if group(item) > 1 and FAILED_FAST:
        pytest.exit(
            f"{len(FAILED_FAST)} lint or unit test(s) failed ({', '.join(FAILED_FAST[:5])}); the workflow and "
            "SLURM tests were not run",
            returncode=1,
        )


@pytest.fixture(scope="session")
def tiny(tmp_path_factory, data_root):
    """The whole DAG of the tiny preset, run once; the run's console output is kept in console.txt.
    PIPELIB_TEST_TINY_DIR names a folder to run it in instead (a finished run there is re-used: only
    what is stale re-runs), for iterating on workflow tests."""
    reuse = os.environ.get("PIPELIB_TEST_TINY_DIR")
    work = Path(reuse) if reuse else tmp_path_factory.mktemp("tiny")
    proc = snakemake(work, data_root=data_root)
    (work / "console.txt").write_text(proc.stdout + proc.stderr)
    return work


@pytest.fixture(scope="session")
def data_root() -> Path:
    if not (DATA_ROOT / "MNIST" / "raw").is_dir():
        pytest.fail(f"offline datasets not found at {DATA_ROOT}; set PIPELIB_DATA_ROOT")
    return DATA_ROOT
