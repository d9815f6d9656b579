"""How many training jobs share each GPU of this machine (the default profile's ``gpu`` resource).

Every training rule asks for ``gpu: 1``.  FedMD's, the students' and the pre-training's CNNs are small and
launch-bound on a GPU (docs/benchmarks.md): one job keeps its CPU core busy feeding kernels while the GPU
waits, so several jobs on one GPU do more work than one.  What bounds them is memory: measured on an H200
(docs/reproduction/gpu-h200/logs, ``nvidia-smi dmon``), twelve paper-preset pre-training jobs at once held
30.7 GB (2.6 GB each), three paper-preset FedMD rows 21.1 GB (7.0 GB each) and two reduced-preset FedMD rows
at the paper's budget 27.0 GB (13.5 GB each).  So each job is budgeted ``JOB_GIB`` = 16 GiB, above the
largest measured, and a GPU takes as many jobs as its memory holds at that budget, at least one; ``--cores``
still caps the jobs of a run (one core each), and ``--resources gpu=N`` on the command line overrides.
"""

from __future__ import annotations

import os
import subprocess

JOB_GIB = 16  # memory budgeted per training job on a GPU (largest measured: 13.5 GB)


def visible_memory_mib() -> list[int]:
    """Total memory (MiB) of each GPU this process may use: nvidia-smi's list, restricted to
    CUDA_VISIBLE_DEVICES' indices where it names them; [] without nvidia-smi or a GPU."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    memory = {}
    for line in out.strip().splitlines():
        index, mib = (x.strip() for x in line.split(","))
        memory[index] = int(float(mib))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return list(memory.values())
    names = []
    for name in (d.strip() for d in visible.split(",")):
        if not name or name.startswith("-"):  # CUDA ignores the first invalid entry and everything after it
            break
        names.append(name)
    if all(n.isdigit() for n in names):
        return [memory[n] for n in names if n in memory]
    return list(memory.values())[: len(names)]  # UUIDs: as many GPUs as named (their sizes assumed alike)


def job_slots(memory_mib: list[int], job_gib: float = JOB_GIB) -> int:
    """The ``gpu`` resource of a machine whose GPUs have ``memory_mib``: per GPU, the jobs its memory holds at
    ``job_gib`` each, at least one (8 on a 141 GB H200, 4 on an 80 GB H100, 1 on a 24 GB card)."""
    return sum(max(1, int(mib // (job_gib * 1024))) for mib in memory_mib)
