"""LDP-FL's weight perturbation (paper 001 Eq. 2), the shuffler's view of it, and its two guarantees.

Each weight w of a layer with range (c, r) is clipped to [c - r, c + r] and replaced by one of two
values, c + r a or c - r a with a = (e^eps + 1) / (e^eps - 1), the first with probability
1/2 + (w - c) / (2r) * (e^eps - 1) / (e^eps + 1): an unbiased estimate of the clipped weight (Lemma 1),
exactly eps-LDP over [c - r, c + r] (Theorem 1: the two probabilities' ratio is at most e^eps).

Shuffling (paper 001 Algorithm 3) sends every (position, value) pair through an anonymous channel: the
server receives, for each position, the unordered multiset of the round's values.  Every client of a
round perturbs with the ranges the server broadcast, so a position's values take one of two publicly
known values, and the multiset is exactly the number of high values: :class:`ShuffledReports` keeps that
count and nothing else (no client id, no arrival order), and the server averages from it.

Privacy is stated twice (``per_weight`` and ``client``): the paper's claim, eps-LDP for one weight of
one client in one round (it rests on the anonymity of shuffling, and is not a composed guarantee), and
the standard guarantee for a client's data, the sequential composition over the d weights it sends in
each of the rounds it joins.
"""

from __future__ import annotations

import math

import torch

from . import Adjacency, Guarantee

PER_WEIGHT_UNIT = "one weight of one client in one round (paper 001's unit; relies on shuffling's anonymity)"
CLIENT_UNIT = "a client's local data set (every weight it sends in every round it joins)"


def magnitude(epsilon: float) -> float:
    """a = (e^eps + 1) / (e^eps - 1): the perturbed value is c +- r a."""
    if not epsilon > 0:
        raise ValueError(f"weight perturbation needs epsilon > 0, got {epsilon}")
    return 1.0 / math.tanh(epsilon / 2)


def prob_high(w: torch.Tensor, c, r, epsilon: float) -> torch.Tensor:
    """Pr[w* = c + r a] for weights ``w`` already inside [c - r, c + r]."""
    return 0.5 + (w - c) / (2 * r) * math.tanh(epsilon / 2)


def perturb_bits(w: torch.Tensor, c, r, epsilon: float, generator: torch.Generator) -> torch.Tensor:
    """Eq. 2's coin for each weight (True: the high value c + r a), after clipping to [c - r, c + r].
    ``c`` and ``r`` broadcast against ``w`` (per-layer scalars); uniforms come from ``generator`` on the CPU."""
    c, r = torch.as_tensor(c, dtype=w.dtype, device=w.device), torch.as_tensor(r, dtype=w.dtype, device=w.device)
    clipped = torch.maximum(torch.minimum(w, c + r), c - r)
    u = torch.rand(w.shape, generator=generator, dtype=torch.float64).to(w.device)
    return u < prob_high(clipped.double(), c, r, epsilon)


def values(bits: torch.Tensor, c, r, epsilon: float) -> torch.Tensor:
    """The perturbed weights c +- r a for Eq. 2's coins ``bits``."""
    a = magnitude(epsilon)
    return c + r * a * (2 * bits.to(torch.float32) - 1)


def variance(w, c, r, epsilon: float):
    """Var[w*] for a weight inside the range: r^2 a^2 - (w - c)^2 (paper 001's Lemma 2 prints the
    first term alone, an upper bound)."""
    return r**2 * magnitude(epsilon) ** 2 - (w - c) ** 2


def mean_variance_bounds(radii, epsilon: float) -> tuple[float, float]:
    """Bounds on Var[mean of n perturbed weights] with client ranges r_u:
    (a^2 - 1) sum r_u^2 / n^2 <= Var <= a^2 sum r_u^2 / n^2.  (Paper 001's Corollary 1 prints other,
    wrong bounds; with equal r these are its Lemma 3.)"""
    radii = torch.as_tensor(radii, dtype=torch.float64)
    s, n, a2 = float((radii**2).sum()), len(radii), magnitude(epsilon) ** 2
    return (a2 - 1) * s / n**2, a2 * s / n**2


class ShuffledReports:
    """What the server receives from the shuffler in one round: per position, the unordered multiset of
    the selected clients' perturbed values, i.e. how many of them are high.  Clients are added one at a
    time and leave no trace but the counts."""

    def __init__(self, shapes: dict[str, torch.Size], c: dict, r: dict, epsilon: float, device=None):
        self.c, self.r, self.epsilon = c, r, epsilon
        self.high = {k: torch.zeros(s, dtype=torch.int32, device=device) for k, s in shapes.items()}
        self.count = 0

    def add(self, bits: dict[str, torch.Tensor]) -> None:
        """One client's coins, through the anonymous channel."""
        for k, b in bits.items():
            self.high[k] += b.to(torch.int32)
        self.count += 1

    def multiset(self, name: str) -> torch.Tensor:
        """The (count x ...) values of layer ``name``, high values first at every position: the canonical
        order of each position's multiset, independent of who sent what."""
        idx = torch.arange(self.count, device=self.high[name].device).view(-1, *[1] * self.high[name].dim())
        return values(idx < self.high[name], self.c[name], self.r[name], self.epsilon)

    def mean(self) -> dict[str, torch.Tensor]:
        """The server's aggregate: the mean of every position's multiset."""
        if not self.count:
            raise ValueError("no client reported this round")
        a = magnitude(self.epsilon)
        return {k: self.c[k] + self.r[k] * a * (2 * h.to(torch.float32) / self.count - 1) for k, h in self.high.items()}


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
