"""The distillation stage's privacy mechanisms, registered by name.

A mechanism is *central* (a trusted curator applies it to the sum of the parties' raw answers) or
*local* (each party applies it to each of its records' answers before anything leaves the party;
the server turns the summed reports into an unbiased estimate).  A new mechanism is one registered
class here plus its tests; the rules find it through :func:`parse`.

Answers are vote counts: a record votes with its label for its k nearest queries, so its answer is a
set of k cells of a (queries x classes) matrix (``items``: one row of cell ids per record).
"""

from __future__ import annotations

import math
import re
from typing import ClassVar

import numpy as np

from .. import vocab
from . import NO_PRIVACY, Guarantee, laplace, local, pate, soft_label, weights

MECHANISMS: dict[str, type["Mechanism"]] = {}
_SPEC = re.compile(r"(?P<name>[a-z]+)(-eps(?P<eps>[0-9.]+))?")


def register(cls):
    MECHANISMS[cls.name] = cls
    return cls


class Mechanism:
    """A privacy mechanism at budget ``epsilon`` (pure epsilon-DP for one labeling round)."""

    name: ClassVar[str]
    locality: ClassVar[str]  # "central", "local", "soft-label" or "weights"

    def __init__(self, epsilon: float = math.inf):
        if not epsilon > 0:
            raise ValueError(f"mechanism {self.name!r} needs epsilon > 0, got {epsilon}")
        self.epsilon = float(epsilon)

    @property
    def spec(self) -> str:
        """The mechanism's path component: ``none`` or ``<name>-eps<epsilon>``."""
        return self.name if math.isinf(self.epsilon) else f"{self.name}-eps{self.epsilon!r}"

    def guarantee(self, k: int) -> Guarantee:
        raise NotImplementedError


class CentralMechanism(Mechanism):
    locality = "central"

    def calibrated(self, k: int, delta: float | None) -> "CentralMechanism":
        """The mechanism set for one release in which a record moves at most ``k`` votes, at ``delta``
        (only a mechanism with a delta, GNMax, uses them)."""
        return self

    def extras(self) -> dict:
        """Columns its release record adds (GNMax: its sigma)."""
        return {}

    def release(self, counts: np.ndarray, k: int, generator: np.random.Generator) -> np.ndarray:
        """The curator's release of the summed counts."""
        raise NotImplementedError


class LocalMechanism(Mechanism):
    locality = "local"

    def release(self, items: np.ndarray, domain: int, generator: np.random.Generator) -> np.ndarray:
        """A party's summed reports: every record (row of ``items``) randomized on its own."""
        raise NotImplementedError

    def estimate(self, released: np.ndarray, n_records: int, k: int) -> np.ndarray:
        """The server's unbiased count estimate from all parties' summed reports."""
        raise NotImplementedError


@register
class NoNoise(CentralMechanism):
    """The non-private reference: the exact counts."""

    name = "none"

    def release(self, counts, k, generator):
        return counts

    def guarantee(self, k):
        return NO_PRIVACY


@register
class Laplace(CentralMechanism):
    """Laplace(2k/epsilon) on every cell of the summed counts (replace-one adjacency)."""

    name = "laplace"

    def release(self, counts, k, generator):
        return laplace.laplace_counts(counts, self.epsilon, k, generator)

    def guarantee(self, k):
        return laplace.guarantee(self.epsilon, k)


@register
class GNMax(CentralMechanism):
    """PATE's GNMax (Papernot et al. 2018): N(0, sigma^2) on every cell of the summed vote counts, and only
    each query's noisy argmax released (one-hot rows).  A record moves at most k votes (PATE's teachers:
    one per query, so k = the queries), each changing two cells by 1: L2 sensitivity sqrt(2k), i.e. k
    compositions of the per-query Gaussian of :mod:`pipelib.privacy.pate`; sigma is calibrated to
    (epsilon, delta) by the RDP accountant (:meth:`calibrated`)."""

    name = "gnmax"

    def __init__(self, epsilon: float = math.inf):
        super().__init__(epsilon)
        self.k = self.delta = self.sigma = None

    def calibrated(self, k, delta):
        if delta is None:
            raise ValueError("gnmax needs a delta (PATE's: ldpdl.pate_delta)")
        out = GNMax(self.epsilon)
        out.k, out.delta = int(k), float(delta)
        out.sigma = pate.gnmax_sigma(self.epsilon, out.delta, out.k)
        return out

    def _check(self, k):
        if self.sigma is None or int(k) != self.k:
            raise ValueError(f"gnmax is set for k = {self.k} votes per record, not {k}: call calibrated(k, delta)")

    def release(self, counts, k, generator):
        self._check(k)
        counts = np.asarray(counts, dtype=np.float64)
        return np.eye(counts.shape[1])[pate.gnmax(counts, self.sigma, generator)]

    def guarantee(self, k):
        self._check(k)
        return pate.guarantee(self.sigma, self.k, self.delta)

    def extras(self):
        return {"sigma": self.sigma}


@register
class RandomizedResponse(LocalMechanism):
    """Every bit of a record's (queries x classes) vote vector flipped with probability 1/(e^(eps/2k)+1)."""

    name = "rr"

    def release(self, items, domain, generator):
        bits = np.zeros((len(items), domain), dtype=bool)
        np.put_along_axis(bits, items, True, axis=1)
        return local.rr_release(bits, self.epsilon, items.shape[1], generator)

    def estimate(self, released, n_records, k):
        return local.rr_estimate(released, n_records, self.epsilon, k)

    def guarantee(self, k):
        return local.guarantee("rr", self.epsilon)


@register
class Collision(LocalMechanism):
    """Wang et al.'s Collision mechanism on a record's set of k voted cells."""

    name = "collision"

    def release(self, items, domain, generator):
        return local.collision_release(items, domain, self.epsilon, generator)

    def estimate(self, released, n_records, k):
        return local.collision_estimate(released, n_records, self.epsilon, k)

    def guarantee(self, k):
        return local.guarantee("collision", self.epsilon)


class SoftLabelMechanism(Mechanism):
    """An owner's sanitizer of its teacher's soft label (LDP-DL, paper 004), ``epsilon`` per answer."""

    locality = "soft-label"

    def release(self, probs: np.ndarray, generator: np.random.Generator) -> np.ndarray:
        """Sanitized answers (box scale, see :mod:`pipelib.privacy.soft_label`), one per row of ``probs``."""
        return soft_label.sanitize(self.name, probs, self.epsilon, generator)

    def guarantee(self, answers: int) -> Guarantee:
        """An owner's record for ``answers`` sanitized answers (sequential composition)."""
        return soft_label.owner_guarantee(self.name, self.epsilon, answers)


@register
class Piecewise(SoftLabelMechanism):
    """Multidimensional piecewise mechanism (paper 004 Algorithms 2-3)."""

    name = "pm"


@register
class Duchi(SoftLabelMechanism):
    """Duchi et al.'s multidimensional mechanism (exactly epsilon-LDP for every k)."""

    name = "duchi"


@register
class LaplaceBox(SoftLabelMechanism):
    """Laplace(2k/epsilon) on each coordinate of the box [-1, 1]^k."""

    name = "laplacebox"


class WeightMechanism(Mechanism):
    """A federated client's perturbation of every weight it uploads (LDP-FL, paper 001), ``epsilon`` per
    weight and round."""

    locality = "weights"  # its draws on tensors: pipelib.privacy.twopoint (this registry stays free of torch)

    def guarantee(self, k: int) -> Guarantee:
        """The paper's per-weight, per-round record (``k`` is unused: one weight)."""
        return weights.per_weight(self.epsilon)

    def client_guarantee(self, n_weights: int, rounds: int) -> Guarantee:
        """A client's composed record over ``n_weights`` weights in each of ``rounds`` rounds."""
        return weights.client(self.epsilon, n_weights, rounds)


@register
class TwoPoint(WeightMechanism):
    """Each weight clipped to its layer's [c - r, c + r] and sent as c + r a or c - r a (paper 001 Eq. 2)."""

    name = "twopoint"


def parse(spec: str) -> Mechanism:
    """'none' -> the exact counts; 'laplace-eps0.1' -> Laplace at epsilon 0.1; errors name the known ones."""
    m = _SPEC.fullmatch(spec)
    if not m or m["name"] not in MECHANISMS:
        raise ValueError(
            f"unknown mechanism {spec!r}; allowed: {', '.join(MECHANISMS)} "
            f"(as none or <name>-eps<epsilon>, e.g. laplace-eps0.1)"
        )
    cls = MECHANISMS[m["name"]]
    if (m["eps"] is None) != (cls is NoNoise):
        raise ValueError(f"mechanism {spec!r}: 'none' takes no epsilon, the others need -eps<epsilon>")
    return cls() if m["eps"] is None else cls(float(m["eps"]))


def _check_vocabulary() -> None:

    central = tuple(n for n, c in MECHANISMS.items() if c.locality == "central")
    local_ = tuple(n for n, c in MECHANISMS.items() if c.locality == "local")
    soft = tuple(n for n, c in MECHANISMS.items() if c.locality == "soft-label")
    weight = tuple(n for n, c in MECHANISMS.items() if c.locality == "weights")
    assert (central, local_, soft, weight) == (
        vocab.CENTRAL_MECHANISMS,
        vocab.LOCAL_MECHANISMS,
        vocab.SOFT_LABEL_MECHANISMS,
        vocab.WEIGHT_MECHANISMS,
    ), "pipelib.vocab must list the registered mechanisms"


_check_vocabulary()
