"""pipelib.gpus and the default profile: how many training jobs share each GPU."""

from pathlib import Path

import pytest
import yte

from pipelib import gpus

ROOT = Path(__file__).resolve().parents[1]
H200, H100, CARD24 = 143771, 81559, 24564  # MiB, as nvidia-smi reports them
LISTED = [("0", "GPU-aaaa1111-22", H200), ("1", "GPU-bbbb3333-44", H100)]


def test_a_gpu_holds_the_jobs_its_memory_holds_at_the_budget_and_at_least_one():
    assert gpus.job_slots([H200]) == 8 and gpus.job_slots([H100]) == 4 and gpus.job_slots([CARD24]) == 1
    assert gpus.job_slots([8192]) == 1 and gpus.job_slots([0]) == 1  # a small card or a MIG slice: one job
    assert gpus.job_slots([H200, H100]) == 12 and gpus.job_slots([]) == 0
    assert gpus.job_slots([H200], job_gib=8) == 17


@pytest.mark.parametrize(
    "visible, expected",
    [
        (None, [H200, H100]),
        ("1", [H100]),
        ("1,0", [H100, H200]),
        ("0,-1,1", [H200]),  # CUDA stops at the first entry it cannot use
        ("0,5,1", [H200]),
        ("", []),
        ("GPU-bbbb", [H100]),  # a UUID prefix names its GPU, not the first listed
        ("GPU-", []),  # ambiguous prefix: CUDA rejects it
        ("MIG-1234-5678", [0]),  # a slice: nvidia-smi's memory is the whole GPU's
    ],
)
def test_the_visible_gpus_memory_follows_cuda_visible_devices(monkeypatch, visible, expected):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert gpus.visible_memory_mib(visible, LISTED) == expected


def fake_smi(tmp_path, monkeypatch, body: str):
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\n{body}\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")


def test_nvidia_smis_lines_are_read_and_what_it_cannot_say_is_skipped(tmp_path, monkeypatch):
    fake_smi(
        tmp_path,
        monkeypatch,
        f"echo 'WARNING: infoROM is corrupted at gpu 0'\necho '0, GPU-a, [N/A]'\necho '1, GPU-b, {H100}'",
    )
    assert gpus._query() == [("1", "GPU-b", H100)]
    fake_smi(tmp_path, monkeypatch, "echo 'NVIDIA-SMI has failed'; exit 9")
    assert gpus._query() == []


def test_a_hung_or_missing_nvidia_smi_gives_no_gpu_memory_in_seconds(tmp_path, monkeypatch):
    monkeypatch.setattr(gpus, "QUERY_SECONDS", 0.5)
    fake_smi(tmp_path, monkeypatch, "sleep 30")
    assert gpus._query() == []
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert gpus._query() == []


def profile_resources() -> dict | None:
    with open(ROOT / "profiles/default/config.yaml") as f:
        return yte.process_yaml(f).get("resources")


def test_the_default_profile_sets_the_gpu_resource_from_the_gpus_memory(tmp_path, monkeypatch):
    fake_smi(tmp_path, monkeypatch, f"echo '0, GPU-a, {H200}'\necho '1, GPU-b, {H100}'")
    monkeypatch.delenv("PIPELIB_GPU_SLOTS", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert profile_resources() == {"gpu": 8}  # one H200: eight training jobs at once (within --cores)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert profile_resources() == {"gpu": 12}
    monkeypatch.setenv("PIPELIB_GPU_SLOTS", "3")
    assert profile_resources() == {"gpu": 3}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert profile_resources() is None  # no GPU: no cap, the jobs run on the CPU within --cores


def test_without_nvidia_smi_the_profile_gives_one_job_per_gpu_cuda_would_use(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    monkeypatch.delenv("PIPELIB_GPU_SLOTS", raising=False)
    for visible, expected in (("0,1", {"gpu": 2}), ("0,-1,1", {"gpu": 1}), ("-1", None), ("GPU-abc", {"gpu": 1})):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
        assert profile_resources() == expected, visible
