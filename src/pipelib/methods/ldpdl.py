"""LDP-DL (paper 004, Algorithm 1) and PATE on the same teachers: the parts that are not mechanisms.

* The query plan (server, public randomness): |X^Q| = S x iterations query slots, each answered by
  N_Q owners drawn uniformly without replacement; drawn before any query is chosen, so every owner's
  number of answers (its *load*) is known in advance and the per-answer epsilon is set from the owner
  that answers most (:func:`pipelib.privacy.soft_label.answer_epsilon`).  Which public sample fills a
  slot is decided later, iteration by iteration (active or random query sampling).
* An :class:`Owner` holds its teacher's soft labels on the public pool (computed in the owner's own
  job) and answers only the queries the plan assigns to it, sanitized on its side.
* The server averages the sanitized answers of each query (:func:`server_targets`), turns the
  estimate into a probability vector (Euclidean projection onto the simplex: post-processing), and
  trains the student with the two-temperature loss of paper 004 Eq. 4 (:func:`kd_loss`).
* Active query sampling (Eq. 5): sum_l (P* - P_l) / (k - 1) = (k P* - 1) / (k - 1) is increasing in the
  student's top probability P*, so the S samples with the smallest top probability are queried
  (:func:`least_confident`); the first iteration, and "without AQS", draw S uniformly at random.
"""

from __future__ import annotations

import numpy as np

from ..privacy import soft_label


def query_slots(slots: int, owners: int, per_query: int, generator: np.random.Generator) -> np.ndarray:
    """(slots x per_query) owner ids: every query slot's N_Q owners, distinct within a slot."""
    if not 1 <= per_query <= owners:
        raise ValueError(f"N_Q = {per_query} owners per query needs 1 <= N_Q <= L = {owners}")
    return np.argsort(generator.random((slots, owners)), axis=1)[:, :per_query]


def loads(slots: np.ndarray, owners: int) -> np.ndarray:
    """How many answers each owner gives under a query plan."""
    return np.bincount(slots.ravel(), minlength=owners)


def confidence_score(probs: np.ndarray) -> np.ndarray:
    """Paper 004 Eq. 5's score of each sample: sum_l (P* - P_l) / (k - 1), P = the student's softmax."""
    probs = np.asarray(probs, dtype=np.float64)
    k = probs.shape[1]
    return (probs.max(1, keepdims=True) - probs).sum(1) / (k - 1)


def least_confident(probs: np.ndarray, available: np.ndarray, s: int) -> np.ndarray:
    """The ``s`` samples of ``available`` (public indices; ``probs`` has one row per public sample)
    with the smallest Eq. 5 score, ties broken by index; sorted."""
    available = np.sort(np.asarray(available))
    if s > len(available):
        raise ValueError(f"asked for {s} queries but only {len(available)} public samples are left")
    score = confidence_score(probs[available])
    return np.sort(available[np.lexsort((available, score))[:s]])


def random_queries(available: np.ndarray, s: int, generator: np.random.Generator) -> np.ndarray:
    """``s`` samples of ``available`` uniformly at random without replacement; sorted."""
    available = np.sort(np.asarray(available))
    if s > len(available):
        raise ValueError(f"asked for {s} queries but only {len(available)} public samples are left")
    return np.sort(generator.choice(available, size=s, replace=False))


class Owner:
    """One data owner: its teacher's soft labels on the public pool, and nothing of any other owner."""

    def __init__(self, owner: int, soft_labels: np.ndarray):
        self.owner, self.soft = int(owner), np.asarray(soft_labels, dtype=np.float64)

    def answer(self, queries: np.ndarray, mechanism: str, epsilon: float, generator) -> np.ndarray:
        """Sanitized answers to the public samples ``queries`` (one per row), each ``epsilon``-LDP."""
        return soft_label.sanitize(mechanism, self.soft[np.asarray(queries)], epsilon, generator)

    def votes(self, queries: np.ndarray) -> np.ndarray:
        """The teacher's labels (PATE: raw votes, for the trusted curator only)."""
        return self.soft[np.asarray(queries)].argmax(1)


def server_targets(sanitized: np.ndarray) -> np.ndarray:
    """The server: per query the mean of its N_Q sanitized answers (queries x N_Q x k, box scale) ->
    an unbiased estimate of the owners' mean probability -> projected onto the simplex."""
    return project_simplex(soft_label.from_box(np.asarray(sanitized, dtype=np.float64).mean(1)))


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of every row of ``v`` onto the probability simplex (Held et al. 1974)."""
    v = np.asarray(v, dtype=np.float64)
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    idx = np.arange(1, v.shape[1] + 1)
    rho = (u - css / idx > 0).sum(1)
    theta = css[np.arange(len(v)), rho - 1] / rho
    return np.maximum(v - theta[:, None], 0.0)


def vote_counts(votes: np.ndarray, k: int) -> np.ndarray:
    """PATE: (owners x queries) teacher labels -> (queries x k) vote counts."""
    votes = np.asarray(votes)
    return np.stack([np.bincount(col, minlength=k) for col in votes.T]).astype(np.float64)


def kd_loss(alpha: float, beta: float, tau: float):
    """Paper 004 Eq. 4 on probability targets p (the aggregated soft labels, read as logits log p):
    alpha H(p, softmax(z_s)) + beta H(softmax(log p / tau), softmax(z_s / tau))."""
    import torch
    import torch.nn.functional as F

    def loss(logits, target):
        hard = -(target * F.log_softmax(logits, 1)).sum(1)
        sharpened = F.softmax(torch.log(target.clamp_min(1e-12)) / tau, 1)
        soft = -(sharpened * F.log_softmax(logits / tau, 1)).sum(1)
        return (alpha * hard + beta * soft).mean()

    return loss
