"""The auditor: the one part of the DAG that reads canaries and who holds them (docs/audit.md).

An audited run is an ordinary run of a method on a scenario variant whose party 0 also holds m canaries
(test records with wrong labels, each in with probability 1/2; :func:`pipelib.data.partition.draw_canaries`).
The auditor scores each canary from what the method released, and :func:`pipelib.privacy.audit.audit`
turns the scores into an empirical lower bound on epsilon, set beside the guarantee the release claims.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from .io import load_npy, read_images, read_json, write_csv, write_json
from .privacy import Guarantee, read_releases
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


def audit_distill(
    *, teacher_spec: str, mechanism: str, inputs: dict, encoder: dict, audit_settings: dict, fields: dict, out_json
) -> dict:
    """Audit a distillation release (reverse k-NN counts).  Central: the curator's noisy sum, less the
    exact votes of the base scenario's parties (input ``known``: every record but the canaries, which a
    DP adversary may know).  Local: party 0's own reports de-biased (the least noisy release that holds
    the canaries' reports), less party 0's exact votes in the base scenario.  ``inputs``: canaries,
    release, guarantee, known, centers, model (the encoder's model files)."""
    from .methods.distill import teacher
    from .methods.rknn import nearest_queries
    from .privacy import registry
    from .represent import embed_images

    t0 = time.perf_counter()
    release_path = inputs["release"]
    frame, pixels, meta = read_images(inputs["canaries"])  # true label, canary_label, included; adjacency
    t = teacher(teacher_spec)
    centers = load_npy(inputs["centers"])
    known = sum(load_npy(p) for p in inputs["known"]).astype(np.float64)
    if str(release_path).endswith(".npy"):
        counts, released = load_npy(release_path), "the curator's noisy counts"
    else:
        report = read_json(release_path)
        reports = np.asarray(report["released"], dtype=np.float64)
        counts = registry.parse(mechanism).estimate(reports, report["records"], report["k"]).reshape(known.shape)
        released = "party 0's local reports"
    neighbours = nearest_queries(embed_images(pixels, encoder, inputs["model"], "cpu"), centers, t.k)
    scores = counts_scores(
        counts - known,
        neighbours,
        frame["canary_label"].to_numpy().astype(np.int64),
        frame["label"].to_numpy().astype(np.int64),
    )
    (claim,) = [Guarantee.from_row(r) for r in read_releases(inputs["guarantee"])]
    included = frame["included"].to_numpy()
    found = audit(scores, included, audit_delta(claim), audit_settings["confidence"], audit_settings["fractions"])
    row = _row(
        claim,
        found,
        method="reverse k-NN",
        mechanism=f"{teacher_spec} {mechanism}",
        released=released,
        canary_adjacency=CANARY_ADJACENCY[meta["adjacency"]],
        score="excess votes of its nearest queries under the canary label minus under its true label",
        wall_seconds=round(time.perf_counter() - t0, 2),
        **fields,
    )
    write_json(row, out_json)
    return row


def model_scores(logits, canary_label: np.ndarray, true_label: np.ndarray) -> np.ndarray:
    """A canary's membership score from a model: the log-likelihood ratio of its canary label over its
    true label (a loss-threshold attack on the canary label, calibrated by the image's own difficulty)."""
    import torch

    lp = torch.log_softmax(logits.float(), dim=1).cpu().numpy()
    rows = np.arange(len(lp))
    return lp[rows, canary_label] - lp[rows, true_label]


def _audit_model(
    model, claim: Guarantee, canaries, label_offset: int, settings: dict, out_json, t0: float, **about
) -> dict:
    """Score every canary by the released ``model`` (:func:`model_scores`) and bound epsilon.  ``about``:
    the row's description (method, released, the rule's fields) and, where a paper claims a different
    epsilon, ``paper_epsilon``."""
    paper_epsilon = about.pop("paper_epsilon", None)
    from .train import loop

    frame, pixels, meta = canaries
    logits = loop.predict(model, loop.to_device(pixels, "cpu"))
    scores = model_scores(
        logits,
        frame["canary_label"].to_numpy().astype(np.int64) + label_offset,
        frame["label"].to_numpy().astype(np.int64) + label_offset,
    )
    included = frame["included"].to_numpy()
    found = audit(scores, included, audit_delta(claim), settings["confidence"], settings["fractions"])
    row = _row(
        claim,
        found,
        canary_adjacency=CANARY_ADJACENCY[meta["adjacency"]],
        score="log-likelihood of the canary label minus of its true label",
        wall_seconds=round(time.perf_counter() - t0, 2),
        **about,
    )
    if paper_epsilon is not None:  # a paper's claim beside the guarantee (LDP-FL's per-weight epsilon)
        row["paper_epsilon"] = paper_epsilon
        row["exceeds_paper_claim"] = bool(found["epsilon_lb"] > paper_epsilon * (1 + 1e-9))
    write_json(row, out_json)
    return row


def audit_party_model(
    *,
    method: str,
    canaries_path,
    models_path,
    label_offset: int,
    guarantee_paths: list,
    audit_settings: dict,
    fields: dict,
    out_json,
) -> dict:
    """Audit a party's final model (party 0 of a FedMD row, which holds the canaries).  The claim is
    party 0's own guarantee (its NFDP sample's record; none for FedMD-NP): the model is computed from its
    sample, the public data and the others' answers, so the claim covers it."""
    from .io import load_torch
    from .privacy import NO_PRIVACY
    from .train.supervised import model_from_state

    t0 = time.perf_counter()
    canaries = read_images(canaries_path)
    party = canaries[2]["party"]
    (state,) = [p for p in load_torch(models_path) if p["party"] == party]
    rows = [r for p in guarantee_paths for r in read_releases(p) if int(r["party"]) == party]
    claim = Guarantee.from_row(rows[0]) if rows else NO_PRIVACY
    model = model_from_state(state, "cpu")
    return _audit_model(
        model, claim, canaries, label_offset, audit_settings, out_json, t0,
        method=method, released="party 0's final model", **fields,
    )  # fmt: skip


def audit_dp_model(
    *, canaries_path, model_path, releases_path, label_offset: int, audit_settings: dict, fields: dict, out_json
) -> dict:
    """Audit a DP-SGD model trained on the pooled records of an audited variant (party 0's include the
    canaries); the claim is the model's guarantee (replace one pooled record)."""
    from .methods.dpsgd import load_dp_model

    t0 = time.perf_counter()
    (claim,) = [Guarantee.from_row(r) for r in read_releases(releases_path)]
    model = load_dp_model(model_path, "cpu")
    return _audit_model(
        model, claim, read_images(canaries_path), label_offset, audit_settings, out_json, t0,
        method="DP-SGD", released="the DP-SGD model", **fields,
    )  # fmt: skip


def audit_ldpfl_model(
    *, canaries_path, model_path, releases_path, audit_settings: dict, fields: dict, out_json
) -> dict:
    """Audit an LDP-FL run's final global model; client 0 holds the canaries.  The claim is client 0's
    guarantee (its data, every weight of every round composed); the paper's per-weight, per-round epsilon
    is set beside it (``paper_epsilon``), since a bound above it refutes that claim as a bound on what a
    client's data leaks."""
    from .io import load_torch
    from .privacy import NO_PRIVACY
    from .train.supervised import model_from_state

    t0 = time.perf_counter()
    canaries = read_images(canaries_path)
    party = canaries[2]["party"]
    rows = [r for r in read_releases(releases_path) if int(r["party"]) == party]
    claim = Guarantee.from_row(rows[0]) if rows and rows[0].get("epsilon") is not None else NO_PRIVACY
    paper = rows[0].get("paper_epsilon") if rows else None
    model = model_from_state(load_torch(model_path), "cpu")
    return _audit_model(
        model, claim, canaries, 0, audit_settings, out_json, t0,
        method="LDP-FL" if math.isfinite(claim.epsilon) else "FedAvg",
        released="the final global model",
        paper_epsilon=None if paper is None or (isinstance(paper, float) and math.isnan(paper)) else float(paper),
        **fields,
    )  # fmt: skip


def audit_student(
    *, method: str, canaries_path, model_path, claim_path, audit_settings: dict, fields: dict, out_json
) -> dict:
    """Audit a distillation run's final student (LDP-DL with AQS, or PATE), trained from the privatized
    answers only; owner 0 holds the canaries.  The claim: owner 0's guarantee composed over every answer it
    gave (LDP-DL's ``owners.csv``), or the curator's (PATE's labels)."""
    from .io import load_torch
    from .train.supervised import model_from_state

    t0 = time.perf_counter()
    canaries = read_images(canaries_path)
    if str(claim_path).endswith(".csv"):
        from .methods.ldpdl import owner_guarantee_of

        owners = pd.read_csv(claim_path)
        claim = owner_guarantee_of(owners[owners["owner"] == canaries[2]["party"]].iloc[0].to_dict())
    else:
        (claim,) = [Guarantee.from_row(r) for r in read_releases(claim_path)]
    model = model_from_state(load_torch(model_path), "cpu")
    return _audit_model(
        model, claim, canaries, 0, audit_settings, out_json, t0, method=method, released="the final student", **fields
    )


def audit_validation(
    *, epsilon: float, audit_settings: dict, seed: int, randomness: str, fields: dict, out_json
) -> dict:
    """The auditor on a release of known epsilon: randomized response on m canaries' inclusion bits
    (``inf``: the bits themselves, no privacy).  Its bound must stay below epsilon."""
    from .privacy import NO_PRIVACY, Adjacency

    t0 = time.perf_counter()
    m = audit_settings["canaries"]
    gen = release_rng(seed, randomness, "audit_validation", {"epsilon": repr(epsilon)})
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
