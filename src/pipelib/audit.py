"""The auditor: the one part of the DAG that reads canaries and who holds them (docs/audit.md).

An audited run is an ordinary run of a method on a scenario variant whose party 0 also holds m canaries
(test records with wrong labels, each in with probability 1/2; :func:`pipelib.data.partition.draw_canaries`).
The auditor scores each canary from what the method released, and :func:`pipelib.privacy.audit.audit`
turns the scores into an empirical lower bound on epsilon, set beside the guarantee the release claims.
This module holds the audit's rows, the validation audit and the table (free of torch); the audits of
released counts and models, which embed and predict, are :mod:`pipelib.audit_models`.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from .io import read_json, write_csv, write_json
from .privacy import NO_PRIVACY, Adjacency, Guarantee
from .privacy.audit import audit, randomized_response
from .seeding import release_rng

CANARY_ADJACENCY = {
    "addremove": "add/remove one canary (absent when out)",
    "replace": "replace one canary's label (its true label when out)",
}
COLUMNS = [
    "method",
    "scenario",
    "mechanism",
    "released",
    "epsilon",
    "delta",
    "adjacency",
    "protected_unit",
    "accountant",
    "epsilon_lb",
    "audit_delta",
    "confidence",
    "exceeds_claim",
    "paper_epsilon",
    "exceeds_paper_claim",
    "auc",
    "canaries",
    "included",
    "guesses",
    "correct",
    "runs",
    "canary_adjacency",
    "score",
    "audited_scenario",
    "preset",
    "seed",
    "wall_seconds",
]


def audit_delta(claim: Guarantee) -> float:
    """The delta a bound is stated at: the claim's, or 0 where there is no claim (no mechanism)."""
    return claim.delta if math.isfinite(claim.epsilon) else 0.0


def _row(guarantee: Guarantee, found: dict, **fields) -> dict:
    claimed = guarantee.row()
    row = {
        **fields,
        **{k: claimed[k] for k in ("epsilon", "delta", "adjacency", "protected_unit", "accountant")},
        **found,
        "audit_delta": audit_delta(guarantee),
        "exceeds_claim": bool(found["epsilon_lb"] > guarantee.epsilon * (1 + 1e-9)),
        "runs": 1,
    }
    return {c: row.get(c) for c in COLUMNS}


def counts_scores(excess: np.ndarray, neighbours: np.ndarray, canary_label: np.ndarray, true_label: np.ndarray):
    """A canary's membership score from a (queries x classes) count release less the counts the
    auditor knows (every record but the canaries): over its k nearest queries, the excess votes
    under its canary label minus those under its true label."""
    return (excess[neighbours, canary_label[:, None]] - excess[neighbours, true_label[:, None]]).sum(1)


def audit_validation(
    *, epsilon: float, audit_settings: dict, seed: int, randomness: str, fields: dict, out_json, release=None
) -> dict:
    """The auditor on a release of known epsilon: randomized response on m canaries' inclusion bits
    (``inf``: the bits themselves, no privacy).  Its bound must stay below epsilon."""
    t0 = time.perf_counter()
    m = audit_settings["canaries"]
    gen = release_rng(seed, randomness, "audit_validation", {**(release or {}), "epsilon": repr(epsilon)})
    included = gen.random(m) < 0.5
    scores = randomized_response(included, epsilon, gen).astype(np.float64)
    claim = (
        NO_PRIVACY
        if math.isinf(epsilon)
        else Guarantee(
            epsilon, 0.0, Adjacency.LOCAL, "one canary's inclusion bit", "randomized response: pure epsilon-DP"
        )
    )
    found = audit(scores, included, audit_delta(claim), audit_settings["confidence"], audit_settings["fractions"])
    row = _row(
        claim,
        found,
        method="validation: randomized response" if claim is not NO_PRIVACY else "validation: no mechanism",
        scenario="-",
        mechanism="none" if claim is NO_PRIVACY else f"rr-eps{epsilon!r}",
        released="each canary's bit through randomized response",
        canary_adjacency=CANARY_ADJACENCY["replace"],
        score="the released bit",
        audited_scenario="-",
        wall_seconds=round(time.perf_counter() - t0, 2),
        **fields,
    )
    write_json(row, out_json)
    return row


def audit_table(paths, out_csv) -> pd.DataFrame:
    """results/audit.csv: one row per audited release."""
    table = pd.DataFrame([read_json(p) for p in paths], columns=COLUMNS)
    write_csv(table, out_csv)
    return table
