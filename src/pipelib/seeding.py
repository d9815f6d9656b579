"""Random generators: seeded ones for everything that must be reproducible, and the generators of
privacy mechanisms, keyed by the release they make.

* :func:`rng` derives a generator from the config seed and stable names (partitions, shuffles, ...).
* :func:`release_rng` is the only source of a mechanism's randomness (NFDP samples, Gaussian, Laplace
  and local noise, Collision's public hashes).  In ``seeded`` mode it is derived from the seed and
  *everything that identifies the release* (the rule, all its wildcards, a digest of the preset and the
  settings the rule passes (:attr:`pipelib.job.Job.release_id`), plus the party inside a job that
  releases for several), hashed with SHA-256, so two releases never share a noise draw (not even a
  reduced and a paper-preset release of one name) and a run can be reproduced; anyone who knows the
  seed can then regenerate the noise.  In ``entropy`` mode it comes from the operating system, so samples
  and noise are secret and differ run to run.
"""

from __future__ import annotations

import hashlib
import json
import zlib

import numpy as np

from .vocab import RANDOMNESS


def rng(seed: int, *keys) -> np.random.Generator:
    """A numpy Generator that depends only on ``seed`` and ``keys`` (ints or strings).

    Strings are hashed with CRC-32, which, unlike ``hash()``, does not change between runs.
    """
    entropy = [int(seed)] + [k if isinstance(k, int) else zlib.crc32(str(k).encode()) for k in keys]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def torch_seed(seed: int, *keys) -> int:
    """A 31-bit seed for torch (initialization, dropout, shuffling) derived like :func:`rng`."""
    return int(rng(seed, *keys).integers(2**31 - 1))


def release_key(rule: str, release: dict) -> str:
    """The canonical name of a release: its rule and every field that identifies it, sorted."""
    return json.dumps({"rule": rule, **{str(k): str(v) for k, v in release.items()}}, sort_keys=True)


def release_rng(seed: int, randomness: str, rule: str, release: dict) -> np.random.Generator:
    """The generator of one privatized release (see the module docstring).  ``release`` must hold every
    wildcard of the job and its settings digest (``Job.of(snakemake).release_id``) and, for a job that
    releases for several parties, the party."""
    if randomness == "entropy":
        return np.random.default_rng(np.random.SeedSequence())  # fresh OS entropy, never written anywhere
    if randomness != "seeded":
        raise ValueError(f"unknown randomness {randomness!r}; allowed: {', '.join(RANDOMNESS)}")
    digest = hashlib.sha256(f"{int(seed)}\0{release_key(rule, release)}".encode()).digest()
    return np.random.default_rng(np.random.SeedSequence(list(np.frombuffer(digest, dtype=np.uint32))))


def release_torch_seed(seed: int, randomness: str, rule: str, release: dict) -> int:
    """A 63-bit torch seed drawn from :func:`release_rng` (for noise generated with torch)."""
    return int(release_rng(seed, randomness, rule, release).integers(2**63 - 1))


def random_queries(available: np.ndarray, s: int, generator: np.random.Generator) -> np.ndarray:
    """``s`` samples of ``available`` uniformly at random without replacement; sorted."""
    available = np.sort(np.asarray(available))
    if s > len(available):
        raise ValueError(f"asked for {s} queries but only {len(available)} public samples are left")
    return np.sort(generator.choice(available, size=s, replace=False))
