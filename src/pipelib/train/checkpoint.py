"""Resumable training: a long job saves its state after every epoch (or round); started again after a
kill or a cluster pre-emption, it continues from there with identical results.

The checkpoint is not a Snakemake output: it survives a failed job and is deleted when the job
finishes.  A fingerprint of everything that determines the run (its settings and the code it runs)
guards against resuming a run of another configuration, or continuing one with edited code.  The code is
the job's ``params.code`` (its script and the pipelib modules that script runs, the digest Snakemake re-runs
a job on), so an edit elsewhere in pipelib neither re-runs a finished job nor discards a killed one's rounds.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from .. import provenance
from ..io import DamagedFileError, atomic_path, readable, zip_crc_problem

log = logging.getLogger(__name__)


def _crc_checked(path):
    """``path``, once every member of its archive passes its CRC check (:func:`pipelib.io.zip_crc_problem`)."""
    problem = zip_crc_problem(path)
    if problem:
        raise ValueError(problem)
    return path


def load_torch(path):
    """A torch file (model or checkpoint) on the CPU; a damaged one raises a DamagedFileError naming it."""
    return readable(path, lambda: torch.load(_crc_checked(path), map_location="cpu", weights_only=False))


def fingerprint(code: str, *parts) -> str:
    """A short hash of everything that determines a run: ``code`` (the job's code digest, ``Job.code``;
    empty outside a workflow job: then every pipelib source file counts) and ``parts``."""
    payload = json.dumps([code or provenance.package_digest(), *parts], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def save_checkpoint(path, fingerprint: str, **state) -> None:
    """Atomically save ``state`` (tensors, state dicts, generator states, python values) and torch's RNG: the
    CPU's and, once CUDA is in use, every GPU's (dropout on a GPU draws from it)."""
    if path is None:
        return
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    with atomic_path(path) as tmp:
        torch.save({"fingerprint": fingerprint, "torch_rng": torch.get_rng_state(), "cuda_rng": cuda, **state}, tmp)


def load_checkpoint(path, fingerprint: str) -> dict | None:
    """The state saved at ``path`` if it exists and was written for ``fingerprint`` (torch's RNG restored, a
    GPU's too when the run resumes on as many GPUs)."""
    if path is None or not Path(path).exists():
        return None
    try:
        state = load_torch(path)
    except DamagedFileError as err:  # a checkpoint is only a shortcut: start over rather than fail
        log.warning("ignoring damaged checkpoint %s (%s); starting over", path, str(err).split(". ")[0])
        return None
    if state.get("fingerprint") != fingerprint:
        log.warning("ignoring checkpoint %s: written for another configuration", path)
        return None
    torch.set_rng_state(state["torch_rng"])
    cuda = state.get("cuda_rng")
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)  # a GPU run's on the same GPUs; on a CPU there is none to restore
    log.info("resuming from %s", path)
    return state


def clear_checkpoint(path) -> None:
    if path is not None:
        Path(path).unlink(missing_ok=True)


class Resume(NamedTuple):
    """Where a job keeps its checkpoint (None: it does not) and the fingerprint of the run that may
    continue from it (:func:`fingerprint`)."""

    path: str | Path | None
    fingerprint: str = ""


NO_RESUME = Resume(None)


def resumable_epochs(
    epochs: int, resume: Resume, model: nn.Module, opt: torch.optim.Optimizer, gen: torch.Generator, history: list
):
    """Yield the epoch numbers still to run; after each one the caller's model, optimizer, shuffling
    generator and ``history`` list are checkpointed.  Restores them first when resuming."""
    checkpoint, fp = resume
    state = load_checkpoint(checkpoint, fp)
    start = 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        gen.set_state(state["gen"])
        history[:] = state["history"]
        start = state["epoch"]
    for epoch in range(start, epochs):
        yield epoch
        save_checkpoint(
            checkpoint,
            fp,
            model=model.state_dict(),
            opt=opt.state_dict(),
            gen=gen.get_state(),
            history=history,
            epoch=epoch + 1,
        )
