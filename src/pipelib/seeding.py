"""Deterministic random generators derived from the config seed and stable names."""

from __future__ import annotations

import zlib

import numpy as np


def rng(seed: int, *keys) -> np.random.Generator:
    """A numpy Generator that depends only on ``seed`` and ``keys`` (ints or strings).

    Strings are hashed with CRC-32, which, unlike ``hash()``, does not change between runs.
    """
    entropy = [int(seed)] + [k if isinstance(k, int) else zlib.crc32(str(k).encode()) for k in keys]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def torch_seed(seed: int, *keys) -> int:
    """A 31-bit seed for torch (initialization, dropout, shuffling) derived like :func:`rng`."""
    return int(rng(seed, *keys).integers(2**31 - 1))
