"""Privacy: one record type for the guarantee of every privatized release, and the mechanisms.

A :class:`Guarantee` says what one release spent (epsilon, delta), between which datasets
(:class:`Adjacency`), for which unit of data (``unit``), by which theorem or accountant, over how many
composed releases, and its privacy curve (``curve``: epsilon as a function of delta), so that every
release can also be stated at one common reference delta (:meth:`Guarantee.epsilon_at`).  Every job
that privatizes writes the guarantees of its releases beside its output (:func:`write_releases`);
``results/privacy_ledger.csv`` and every result row are built from those files, never from config values.

The guarantees assume that the mechanisms' randomness is secret (``privacy.randomness: entropy``, or a
seed nobody else knows): with the default ``seeded`` randomness anyone who knows the seed can regenerate
the samples and the noise (see :mod:`pipelib.seeding`).

Mechanism families, one module each: ``nfdp`` (paper 002's subsampling theorems), ``gaussian``
(FedMD-LDP's Gaussian answers), ``laplace`` (central noisy counts), ``local`` (randomized response,
Collision), ``soft_label`` (LDP-DL's sanitizers), ``pate`` (GNMax), ``weights`` (LDP-FL's weight
perturbation and shuffler); ``registry`` looks the mechanisms up by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from ..io import read_json, write_json


class Adjacency(StrEnum):
    """Which datasets a guarantee calls neighbouring."""

    ADD_REMOVE_ONE = "add/remove one record"
    REPLACE_ONE = "replace one record"
    LOCAL = "any two inputs of a local randomizer"
    NONE = "none"


# Privacy curves (the ``curve`` field): how epsilon depends on the delta it is stated at.
PURE = "pure"  # pure epsilon-DP: the same epsilon at every delta >= 0
THRESHOLD = "threshold"  # epsilon at delta >= the release's delta; no finite epsilon below it (NFDP)
NO_CURVE = "none"  # no mechanism: no finite epsilon at any delta < 1
GDP = "gdp mu="  # a composition of Gaussian releases is mu-GDP; exact curve of Balle & Wang (2018)
RDP = "rdp gaussian z="  # "<RDP><noise multiplier> count=<n>": n Gaussian releases, RDP accountant's curve


@dataclass(frozen=True)
class Guarantee:
    """The (epsilon, delta)-DP guarantee of one privatized release and what it protects."""

    epsilon: float
    delta: float
    adjacency: Adjacency
    unit: str  # the protected unit: "one record of a party's private data", ...
    accountant: str  # the theorem or accountant that gives (epsilon, delta)
    releases: int = 1  # releases composed into this guarantee
    curve: str = PURE  # PURE, THRESHOLD, NO_CURVE, f"{GDP}{mu!r}" or f"{RDP}{z!r} count={n}"

    def epsilon_at(self, delta: float) -> float:
        """The smallest epsilon this release is proven (epsilon, ``delta``)-DP for; inf when none is."""
        if self.curve == PURE:
            return self.epsilon
        if self.curve == THRESHOLD:
            return self.epsilon if delta >= self.delta else math.inf
        if self.curve.startswith(GDP):
            from .gaussian import gdp_epsilon

            return gdp_epsilon(float(self.curve[len(GDP) :]), delta)
        if self.curve.startswith(RDP):
            from .rdp import rdp_epsilon

            z, count = self.curve[len(RDP) :].split(" count=")
            return rdp_epsilon(float(z), int(count), delta, 1.0) if 0 < delta < 1 else math.inf
        return math.inf

    def row(self) -> dict:
        """The guarantee's columns in the ledger and in result rows."""
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "adjacency": Adjacency(self.adjacency).value,
            "protected_unit": self.unit,
            "accountant": self.accountant,
            "releases": int(self.releases),
            "curve": self.curve,
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
            row["curve"],
        )


NO_PRIVACY = Guarantee(math.inf, 1.0, Adjacency.NONE, "nothing (no privacy mechanism)", "none", 0, NO_CURVE)

# Columns of every ledger row (one privatized release): what was released, by whom, and its guarantee.
RELEASE_COLUMNS = ("method", "scenario", "release", "party", "mechanism", "randomness", "release_key")
GUARANTEE_COLUMNS = ("epsilon", "delta", "adjacency", "protected_unit", "accountant", "releases", "curve")
LEDGER_COLUMNS = (
    RELEASE_COLUMNS
    + GUARANTEE_COLUMNS
    + ("n", "k", "sampling", "sigma", "epsilon_log10_paper_convention", "delta_vacuous", "seed")
)


def delta_vacuous(delta: float, n: int) -> bool:
    """True when delta >= 1/n: a mechanism that publishes one random record outright meets
    (0, 1/n)-DP, so such a delta protects nobody."""
    return bool(delta >= (1.0 / n) * (1 - 1e-12))


def with_reference_delta(row: dict, delta_ref: float) -> dict:
    """A ledger or result row plus ``delta_ref`` and ``epsilon_at_delta_ref``, the epsilon its guarantee
    record proves at that common delta (inf for NFDP and no-privacy rows)."""
    return {**row, "delta_ref": delta_ref, "epsilon_at_delta_ref": Guarantee.from_row(row).epsilon_at(delta_ref)}


class Draw(NamedTuple):
    """How a release's randomness was drawn: ``randomness`` (seeded or os) and ``key``, what keyed the
    draw (:func:`pipelib.seeding.release_key`)."""

    randomness: str
    key: str


def release_row(
    method: str,
    scenario: str,
    release: str,
    party: int,
    mechanism: str,
    guarantee: Guarantee,
    *,
    drawn: Draw,
    **extra,
) -> dict:
    """One ledger row: which release (``release`` names it: the job's output), who made it, how its
    randomness was drawn (``drawn``: where from, and what keyed the draw), its guarantee."""
    row = {
        "method": method,
        "scenario": scenario,
        "release": release,
        "party": int(party),
        "mechanism": mechanism,
        "randomness": drawn.randomness,
        "release_key": drawn.key,
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
