"""pipelib.gpus and the default profile: how many training jobs share each GPU."""

from pathlib import Path

import pytest
import yte

from pipelib import gpus

ROOT = Path(__file__).resolve().parents[1]
H200, H100, CARD24 = 143771, 81559, 24564  # MiB, as nvidia-smi reports them


def test_a_gpu_holds_the_jobs_its_memory_holds_at_the_budget_and_at_least_one():
    assert gpus.job_slots([H200]) == 8 and gpus.job_slots([H100]) == 4 and gpus.job_slots([CARD24]) == 1
    assert gpus.job_slots([8192]) == 1  # a card under the budget still runs one job
    assert gpus.job_slots([H200, H100]) == 12 and gpus.job_slots([]) == 0
    assert gpus.job_slots([H200], job_gib=8) == 17


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    """An nvidia-smi on PATH that lists an H200 (index 0) and an H100 (index 1)."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '0, {H200}'\necho '1, {H100}'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    return monkeypatch


@pytest.mark.parametrize(
    "visible, expected",
    [(None, [H200, H100]), ("1", [H100]), ("1,0", [H100, H200]), ("0,-1,1", [H200]), ("", []), ("GPU-a1b2", [H200])],
)
def test_the_visible_gpus_memory_follows_cuda_visible_devices(fake_smi, visible, expected):
    if visible is None:
        fake_smi.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        fake_smi.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert gpus.visible_memory_mib() == expected


def test_without_nvidia_smi_no_gpu_memory_is_known(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpus.visible_memory_mib() == []


def profile_resources() -> dict | None:
    with open(ROOT / "profiles/default/config.yaml") as f:
        return yte.process_yaml(f).get("resources")


def test_the_default_profile_sets_the_gpu_resource_from_the_gpus_memory(fake_smi):
    fake_smi.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert profile_resources() == {"gpu": 8}  # one H200: eight training jobs at once
    fake_smi.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert profile_resources() == {"gpu": 12}
    fake_smi.setenv("CUDA_VISIBLE_DEVICES", "")
    assert profile_resources() is None  # no GPU: no cap, the jobs run on the CPU within --cores
