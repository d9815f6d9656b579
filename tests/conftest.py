"""Shared fixtures: the offline data root (../shared/data beside the checkout, or $PIPELIB_DATA_ROOT).

Tests run in groups: fast unit tests first, then the workflow on the tiny preset (``workflow``), then the
local SLURM cluster (``slurm``); ``pytest -m "not workflow and not slurm"`` runs the unit tests alone.
"""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests' helpers module
from helpers import snakemake  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA_ROOT = Path(os.environ.get("PIPELIB_DATA_ROOT", REPO.parent / "shared" / "data")).resolve()
GROUPS = ("workflow", "slurm")


def pytest_collection_modifyitems(config, items):
    """Unit tests first, then the workflow tests, then the SLURM tests (stable within a group)."""

    def group(item):
        return next((i + 1 for i, g in enumerate(GROUPS) if item.get_closest_marker(g)), 0)

    items.sort(key=group)


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
