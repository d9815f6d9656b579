"""Privacy: one record type for the guarantee of every privatized release, and the mechanisms.

A :class:`Guarantee` says what one release spent (epsilon, delta), between which datasets
(:class:`Adjacency`), for which unit of data (``unit``), by which theorem or accountant, over how many
composed releases.  Every job that privatizes writes the guarantees of its releases beside its output
(:func:`write_releases`); ``results/privacy_ledger.csv`` and every result row are built from those
files, never from config values.

Mechanism families, one module each: ``nfdp`` (paper 002's subsampling theorems), ``gaussian``
(FedMD-LDP's Gaussian answers), ``laplace`` (central noisy counts), ``local`` (randomized response,
Collision); ``registry`` looks the distillation stage's mechanisms up by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from ..io import read_json, write_json


class Adjacency(StrEnum):
    """Which datasets a guarantee calls neighbouring."""

    ADD_REMOVE_ONE = "add/remove one record"
    REPLACE_ONE = "replace one record"
    LOCAL = "any two inputs of a local randomizer"
    NONE = "none"


@dataclass(frozen=True)
class Guarantee:
    """The (epsilon, delta)-DP guarantee of one privatized release and what it protects."""

    epsilon: float
    delta: float
    adjacency: Adjacency
    unit: str  # the protected unit: "one record of a party's private data", ...
    accountant: str  # the theorem or accountant that gives (epsilon, delta)
    releases: int = 1  # releases composed into this guarantee

    def row(self) -> dict:
        """The guarantee's columns in the ledger and in result rows."""
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "adjacency": Adjacency(self.adjacency).value,
            "protected_unit": self.unit,
            "accountant": self.accountant,
            "releases": int(self.releases),
        }

    @classmethod
    def from_row(cls, row: dict) -> "Guarantee":
        return cls(
            float(row["epsilon"]),
            float(row["delta"]),
            Adjacency(row["adjacency"]),
            row["protected_unit"],
            row["accountant"],
            int(row["releases"]),
        )


NO_PRIVACY = Guarantee(math.inf, 1.0, Adjacency.NONE, "nothing (no privacy mechanism)", "none", 0)

# Columns of every ledger row (one privatized release): what was released, by whom, and its guarantee.
RELEASE_COLUMNS = ("method", "scenario", "release", "party", "mechanism")
GUARANTEE_COLUMNS = ("epsilon", "delta", "adjacency", "protected_unit", "accountant", "releases")
LEDGER_COLUMNS = (
    RELEASE_COLUMNS + GUARANTEE_COLUMNS + ("n", "k", "sampling", "sigma", "epsilon_log10", "delta_vacuous", "seed")
)


def delta_vacuous(delta: float, n: int) -> bool:
    """True when delta >= 1/n: a mechanism that publishes one random record outright meets
    (0, 1/n)-DP, so such a delta protects nobody."""
    return bool(delta >= (1.0 / n) * (1 - 1e-12))


def release_row(
    method: str, scenario: str, release: str, party: int, mechanism: str, guarantee: Guarantee, **extra
) -> dict:
    """One ledger row: which release (``release`` names it: the job's output), who made it, its guarantee."""
    row = {
        "method": method,
        "scenario": scenario,
        "release": release,
        "party": int(party),
        "mechanism": mechanism,
        **guarantee.row(),
        **extra,
    }
    return {c: row.get(c) for c in LEDGER_COLUMNS} | {k: v for k, v in row.items() if k not in LEDGER_COLUMNS}


def write_releases(rows: list[dict], path) -> None:
    """Write a job's ledger rows (the guarantees of the releases it made) beside its output."""
    write_json(rows, path)


def read_releases(path) -> list[dict]:
    rows = read_json(path)
    return rows if isinstance(rows, list) else [rows]
