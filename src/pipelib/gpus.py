"""How many training jobs share each GPU of this machine (the default profile's ``gpu`` resource).

Every training rule asks for ``gpu: 1``.  FedMD's, the students' and the pre-training's CNNs are small and
launch-bound on a GPU (docs/benchmarks.md): one job keeps its CPU threads busy feeding kernels while the GPU
waits, so several jobs on one GPU do more work than one.  What bounds them is memory: measured on an H200
(docs/reproduction/gpu-h200/logs, ``nvidia-smi dmon``), three paper-preset FedMD rows at once held 21.1 GB and
two 14.1 GB (7.0 GB a row, the largest per job measured), twelve pre-training jobs 30.7 GB (2.6 GB each), and
seven FedMD rows (five paper, two reduced) 27.0 GB.  So each job is budgeted ``JOB_GIB`` = 16 GiB, over twice
the largest measured, and a GPU takes as many jobs as its memory holds at that budget, at least one; a MIG slice takes
one.  ``--cores`` still caps the jobs of a run (each takes its rule's ``threads``), ``--resources gpu=N`` on the
command line overrides, and ``PIPELIB_GPU_SLOTS=N`` sets the profile's value without asking nvidia-smi.
"""

from __future__ import annotations

import os
import subprocess

JOB_GIB = 16  # memory budgeted per training job on a GPU (largest measured: 7.0 GB)
QUERY_SECONDS = 5  # nvidia-smi answers in well under a second; a hung driver must not hold up every command


def _query() -> list[tuple[str, str, int]]:
    """(index, uuid, total MiB) of every GPU nvidia-smi lists; [] when it is missing, fails, hangs or prints
    nothing usable (a line it cannot read, such as '[N/A]' or a warning, is skipped)."""
    try:
        proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=index,uuid,memory.total", "--format=csv,noheader,nounits"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return []
    try:
        out, _ = proc.communicate(timeout=QUERY_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()  # not waited for: a process stuck in the driver may never exit
        return []
    gpus = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        try:
            gpus.append((fields[0], fields[1], int(float(fields[2]))))
        except (IndexError, ValueError):
            continue
    return gpus


def visible_memory_mib(visible: str | None = None, gpus: list[tuple[str, str, int]] | None = None) -> list[int]:
    """Total memory (MiB) of each GPU this process may use: nvidia-smi's list, restricted to
    ``CUDA_VISIBLE_DEVICES`` (``visible``; the environment's by default) where it is set: indices, GPU UUIDs
    or their prefixes, up to the first entry CUDA cannot use (as CUDA reads it).  A MIG slice counts as 0 MiB
    (one job: nvidia-smi gives the whole GPU's memory, not the slice's)."""
    gpus = _query() if gpus is None else gpus
    visible = os.environ.get("CUDA_VISIBLE_DEVICES") if visible is None else visible
    if visible is None:
        return [mib for _, _, mib in gpus]
    memory = []
    for name in (d.strip() for d in visible.split(",")):
        if name.startswith("MIG-"):
            memory.append(0)
            continue
        match = [mib for index, uuid, mib in gpus if name and (name == index or uuid.startswith(name))]
        if len(match) != 1:  # CUDA ignores this entry and every one after it
            break
        memory.append(match[0])
    return memory


def job_slots(memory_mib: list[int], job_gib: float = JOB_GIB) -> int:
    """The ``gpu`` resource of a machine whose GPUs have ``memory_mib``: per GPU, the jobs its memory holds at
    ``job_gib`` each, at least one (8 on a 141 GB H200, 4 on an 80 GB H100, 1 on a 24 GB card)."""
    return sum(max(1, int(mib // (job_gib * 1024))) for mib in memory_mib)


def profile_slots(gpus: int) -> int:
    """The default profile's ``gpu`` resource on a machine with ``gpus`` GPUs: ``PIPELIB_GPU_SLOTS`` if set,
    else :func:`job_slots` of the visible GPUs' memory, else one job per GPU."""
    if os.environ.get("PIPELIB_GPU_SLOTS", "").strip():
        return int(os.environ["PIPELIB_GPU_SLOTS"])
    memory = visible_memory_mib()
    return job_slots(memory) if memory else gpus
