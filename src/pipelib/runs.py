"""Runs as data: one typed, frozen record per kind of run, with the grammar of its name in one place.

A FedMD row's run name (the ``run`` wildcard of rules fedmd, fedmd_budget, audit_fedmd) is ``np``,
``nfdp-<sampling>-k<k>`` or ``ldp-<sampling>-k<k>`` (FedMD-LDP calibrated to the NFDP row of that sampling
and k).  :class:`FedmdRun` parses and formats it; every other module asks it instead of splitting strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .vocab import FEDMD_KINDS, SAMPLINGS

FEDMD_METHOD = {"np": "FedMD-NP", "nfdp": "FedMD-NFDP", "ldp": "FedMD-LDP"}
FEDMD_RUN = re.compile(rf"np|(?:nfdp|ldp)-(?:{'|'.join(SAMPLINGS)})-k[1-9][0-9]*")  # the wildcard's constraint


@dataclass(frozen=True)
class FedmdRun:
    """One FedMD row: ``kind`` np (every party on all its records), nfdp (on its NFDP sample of ``k``
    records drawn with ``sampling``) or ldp (all records, Gaussian-noised answers calibrated to that NFDP
    sample's (epsilon, delta))."""

    kind: str
    sampling: str | None = None
    k: int | None = None

    def __post_init__(self):
        if self.kind not in FEDMD_KINDS:
            raise ValueError(f"FedMD run kind {self.kind!r}: one of {', '.join(FEDMD_KINDS)}")
        if (self.kind == "np") != (self.sampling is None and self.k is None):
            raise ValueError(f"FedMD run {self.kind!r}: np takes no sample, nfdp and ldp a sampling and a k")
        if self.sampling is not None and self.sampling not in SAMPLINGS:
            raise ValueError(f"FedMD run sampling {self.sampling!r}: one of {', '.join(SAMPLINGS)}")

    @classmethod
    def parse(cls, name: str) -> FedmdRun:
        """The run a name stands for; ValueError naming the grammar for anything else."""
        if not FEDMD_RUN.fullmatch(name):
            raise ValueError(f"FedMD run {name!r}: expected np, nfdp-<sampling>-k<k> or ldp-<sampling>-k<k>")
        if name == "np":
            return cls("np")
        kind, sampling, k = name.split("-")
        return cls(kind, sampling, int(k[1:]))

    @classmethod
    def nfdp(cls, sampling: str, k: int) -> FedmdRun:
        return cls("nfdp", sampling, int(k))

    @classmethod
    def ldp(cls, sampling: str, k: int) -> FedmdRun:
        return cls("ldp", sampling, int(k))

    @property
    def name(self) -> str:
        return "np" if self.kind == "np" else f"{self.kind}-{self.sampling}-k{self.k}"

    def __str__(self) -> str:
        return self.name

    @property
    def method(self) -> str:
        """The result row's method: FedMD-NP, FedMD-NFDP or FedMD-LDP."""
        return FEDMD_METHOD[self.kind]

    @property
    def sample(self) -> tuple[str, int] | None:
        """(sampling, k) of the NFDP sample the run reads (nfdp: its parties' data; ldp: the ledger it is
        calibrated to), or None (np)."""
        return None if self.kind == "np" else (self.sampling, self.k)

    @property
    def draws_noise(self) -> bool:
        """Whether the job itself draws a mechanism's randomness (FedMD-LDP's noise; NFDP's is its samples')."""
        return self.kind == "ldp"
