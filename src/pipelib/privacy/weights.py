"""LDP-FL's weight perturbation (paper 001 Eq. 2), the shuffler's view of it, and its two guarantees:
the closed forms and guarantees here (free of torch: report jobs read them); the draws on tensors and
the shuffler in :mod:`pipelib.privacy.twopoint`.

Each weight w of a layer with range (c, r) is clipped to [c - r, c + r] and replaced by one of two
values, c + r a or c - r a with a = (e^eps + 1) / (e^eps - 1), the first with probability
1/2 + (w - c) / (2r) * (e^eps - 1) / (e^eps + 1): an unbiased estimate of the clipped weight (Lemma 1),
exactly eps-LDP over [c - r, c + r] (Theorem 1: the two probabilities' ratio is at most e^eps).

Shuffling (paper 001 Algorithm 3) sends every (position, value) pair through an anonymous channel: the
server receives, for each position, the unordered multiset of the round's values.  Every client of a
round perturbs with the ranges the server broadcast, so a position's values take one of two publicly
known values, and the multiset is exactly the number of high values:
:class:`pipelib.privacy.twopoint.ShuffledReports` keeps that count and nothing else (no client id, no
arrival order), and the server averages from it.

Privacy is stated twice (``per_weight`` and ``client``): the paper's claim, eps-LDP for one weight of
one client in one round (it rests on the anonymity of shuffling, and is not a composed guarantee), and
the standard guarantee for a client's data, the sequential composition over the d weights it sends in
each of the rounds it joins.
"""

from __future__ import annotations

import math

import numpy as np

from . import Adjacency, Guarantee

PER_WEIGHT_UNIT = "one weight of one client in one round (paper 001's unit; relies on shuffling's anonymity)"
CLIENT_UNIT = "a client's local data set (every weight it sends in every round it joins)"


def magnitude(epsilon: float) -> float:
    """a = (e^eps + 1) / (e^eps - 1): the perturbed value is c +- r a."""
    if not epsilon > 0:
        raise ValueError(f"weight perturbation needs epsilon > 0, got {epsilon}")
    return 1.0 / math.tanh(epsilon / 2)


def prob_high(w, c, r, epsilon: float):
    """Pr[w* = c + r a] for weights ``w`` already inside [c - r, c + r]."""
    return 0.5 + (w - c) / (2 * r) * math.tanh(epsilon / 2)


def variance(w, c, r, epsilon: float):
    """Var[w*] for a weight inside the range: r^2 a^2 - (w - c)^2 (paper 001's Lemma 2 prints the
    first term alone, an upper bound)."""
    return r**2 * magnitude(epsilon) ** 2 - (w - c) ** 2


def mean_variance_bounds(radii, epsilon: float) -> tuple[float, float]:
    """Bounds on Var[mean of n perturbed weights] with client ranges r_u:
    (a^2 - 1) sum r_u^2 / n^2 <= Var <= a^2 sum r_u^2 / n^2.  (Paper 001's Corollary 1 prints other,
    wrong bounds; with equal r these are its Lemma 3.)"""
    radii = np.asarray(radii, dtype=np.float64)
    s, n, a2 = float((radii**2).sum()), len(radii), magnitude(epsilon) ** 2
    return (a2 - 1) * s / n**2, a2 * s / n**2


def per_weight(epsilon: float) -> Guarantee:
    """The paper's claim: eps-LDP for one weight of one client in one round (Theorem 1)."""
    return Guarantee(
        epsilon,
        0.0,
        Adjacency.LOCAL,
        PER_WEIGHT_UNIT,
        "paper 001 Theorem 1 for one weight; not composed over weights or rounds",
        1,
    )


def client(epsilon: float, weights: int, rounds: int) -> Guarantee:
    """The standard guarantee for a client's data: sequential composition of eps-LDP over the ``weights``
    values it sends in each of the ``rounds`` it joins."""
    return Guarantee(
        epsilon * weights * rounds,
        0.0,
        Adjacency.LOCAL,
        CLIENT_UNIT,
        f"sequential composition of {weights} weights x {rounds} rounds, each {epsilon:g}-LDP (paper 001 Eq. 2)",
        weights * rounds,
    )
