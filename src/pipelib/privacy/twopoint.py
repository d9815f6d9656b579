"""Paper 001's Eq. 2 on tensors: a client's coins for its weights, the perturbed values, and what the
server receives from the shuffler (:class:`ShuffledReports`).  The closed forms and the guarantees are
:mod:`pipelib.privacy.weights`."""

from __future__ import annotations

import torch

from .weights import magnitude, prob_high


def perturb_bits(w: torch.Tensor, c, r, epsilon: float, generator: torch.Generator) -> torch.Tensor:
    """Eq. 2's coin for each weight (True: the high value c + r a), after clipping to [c - r, c + r].
    ``c`` and ``r`` broadcast against ``w`` (per-layer scalars); uniforms come from ``generator`` on the CPU.
    A NaN weight (a client whose local training diverged) is sent as the box's centre c, a fair coin: a NaN
    passes through clipping, compares false and would always give the low value, which no input in the box
    can (its probability is at most e^eps / (e^eps + 1)), so the guarantee would not hold for it."""
    c, r = torch.as_tensor(c, dtype=w.dtype, device=w.device), torch.as_tensor(r, dtype=w.dtype, device=w.device)
    w = torch.where(torch.isnan(w), c, w)
    clipped = torch.maximum(torch.minimum(w, c + r), c - r)
    u = torch.rand(w.shape, generator=generator, dtype=torch.float64).to(w.device)
    return u < prob_high(clipped.double(), c, r, epsilon)


def values(bits: torch.Tensor, c, r, epsilon: float) -> torch.Tensor:
    """The perturbed weights c +- r a for Eq. 2's coins ``bits``."""
    a = magnitude(epsilon)
    return c + r * a * (2 * bits.to(torch.float32) - 1)


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
