"""The audits that read what a method released and score the canaries with it (docs/audit.md): reverse
k-NN's counts (the canaries embedded by the release's encoder) and the models of FedMD's parties,
DP-SGD, LDP-FL, LDP-DL and PATE (the canaries' log-likelihoods).  The rows, the bound and the table
are :mod:`pipelib.audit`."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import torch

from .audit import CANARY_ADJACENCY, _row, audit_delta, counts_scores
from .io import load_npy, read_images, read_json, write_json
from .methods.distill import teacher
from .methods.dpsgd import load_dp_model
from .methods.ldpdl import owner_guarantee_of
from .methods.rknn import nearest_queries
from .privacy import NO_PRIVACY, Guarantee, read_releases, registry
from .privacy.audit import audit
from .represent import embed_images
from .train import loop
from .train.checkpoint import load_torch
from .train.supervised import model_from_state


def audit_distill(
    *, teacher_spec: str, mechanism: str, inputs: dict, encoder: dict, audit_settings: dict, fields: dict, out_json
) -> dict:
    """Audit a distillation release (reverse k-NN counts).  Central: the curator's noisy sum, less the
    exact votes of the base scenario's parties (input ``known``: every record but the canaries, which a
    DP adversary may know).  Local: party 0's own reports de-biased (the least noisy release that holds
    the canaries' reports), less party 0's exact votes in the base scenario.  ``inputs``: canaries,
    release, guarantee, known, centers, model (the encoder's model files)."""
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
    t0 = time.perf_counter()
    canaries = read_images(canaries_path)
    if str(claim_path).endswith(".csv"):
        owners = pd.read_csv(claim_path)
        claim = owner_guarantee_of(owners[owners["owner"] == canaries[2]["party"]].iloc[0].to_dict())
    else:
        (claim,) = [Guarantee.from_row(r) for r in read_releases(claim_path)]
    model = model_from_state(load_torch(model_path), "cpu")
    return _audit_model(
        model, claim, canaries, 0, audit_settings, out_json, t0, method=method, released="the final student", **fields
    )
