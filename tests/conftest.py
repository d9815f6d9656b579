"""Shared fixtures: the offline data root (../shared/data beside the checkout, or $PIPELIB_DATA_ROOT)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_ROOT = Path(os.environ.get("PIPELIB_DATA_ROOT", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def data_root() -> Path:
    if not (DATA_ROOT / "MNIST" / "raw").is_dir():
        pytest.fail(f"offline datasets not found at {DATA_ROOT}; set PIPELIB_DATA_ROOT")
    return DATA_ROOT
