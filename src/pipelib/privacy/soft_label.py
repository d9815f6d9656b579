"""Owner-side sanitizers of a soft label (LDP-DL, paper 004): each data owner randomizes its teacher's
answer before it leaves the owner; the server averages the sanitized answers of the owners it asked.

The input domain is the box [-1, 1]^k: a teacher's probability vector p (k classes) is mapped to
z = 2p - 1, with no side information (paper 004's code instead rescales each raw logit vector by its own
min and max and uses them again after perturbation: unperturbed data leaving the owner).  Every
sanitizer here is unbiased on the box, so the server's estimate of the queried owners' mean p is
(mean of sanitized z + 1) / 2.  Each sanitized answer is pure epsilon-LDP for *any two inputs of the
box* (so for any two teachers' outputs): it protects the owner's whole dataset as far as that answer
reveals it.  An owner's answers compose sequentially (:func:`owner_guarantee`).

* Piecewise mechanism, one dimension (PM-ONE; Wang et al., ICDE 2019; paper 004 Algorithm 2) and its
  multidimensional version (Algorithm 3: m = max(1, min(k, floor(eps / 2.5))) coordinates drawn without
  replacement, each PM-ONE at eps/m, scaled by k/m; the others 0).
* Duchi et al.'s multidimensional mechanism.  For even k the form usually quoted (Wang et al. 2019;
  SPECS.md 4.2) is not epsilon-LDP: with ties t.v = 0 in both halves an output's probability ratio
  reaches e^eps + 1; with ties only in T- it reaches 8.07 at eps = 1.3, k = 4 (exact enumeration).  Ours
  draws t uniformly from {-1, 1}^k and flips its sign when it points the wrong way (ties keep half the
  weight of each half), which is exactly epsilon-LDP, and B = 2^(k-1) / binom(k-1, floor((k-1)/2)) *
  (e^eps + 1) / (e^eps - 1) makes it unbiased; for odd k this is the published mechanism.  Both checked
  exactly by enumeration in the tests.
* Laplace on the box: Laplace(2k/eps) on each coordinate (L1 diameter of [-1, 1]^k is 2k, as paper
  004's code).  The simplex alone has L1 diameter 4 in z; the box is the domain the other two protect.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import Adjacency, Guarantee

UNIT = "an owner's whole private data, through its teacher's answers (any two answers of the box)"
NAMES = {
    "pm": "piecewise mechanism (Wang et al. 2019), multidimensional",
    "duchi": "Duchi et al.'s multidimensional mechanism (exact even-k form)",
    "laplacebox": "Laplace(2k/eps) on [-1, 1]^k",
}


def to_box(p: np.ndarray) -> np.ndarray:
    """Probability vectors (rows) -> the box [-1, 1]^k the sanitizers take: z = 2p - 1.  A row with a NaN (a
    diverged teacher) becomes the uniform vector, inside the box: a NaN would pass through clipping and the
    sanitizer, and the output would reveal it whatever epsilon."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 2 and np.isnan(p).any():
        p = np.where(np.isnan(p).any(axis=1, keepdims=True), 1.0 / p.shape[1], p)
    if p.size and (p.min() < -1e-9 or p.max() > 1 + 1e-9):
        raise ValueError("soft labels must be probabilities in [0, 1]")
    return np.clip(2.0 * p - 1.0, -1.0, 1.0)


def from_box(z: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_box` (on sanitized means: an unbiased estimate of the mean probability)."""
    return (np.asarray(z, dtype=np.float64) + 1.0) / 2.0


# --- Piecewise mechanism ---------------------------------------------------------------------------


def pm_bounds(epsilon: float) -> float:
    """C = (e^(eps/2) + 1) / (e^(eps/2) - 1): PM-ONE's output lies in [-C, C]."""
    if not epsilon > 0:
        raise ValueError(f"need epsilon > 0, got {epsilon}")
    return (math.exp(epsilon / 2) + 1) / math.expm1(epsilon / 2)


def pm_one(t: np.ndarray, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """PM-ONE on every entry of ``t`` (each in [-1, 1]) at budget ``epsilon``."""
    t = np.asarray(t, dtype=np.float64)
    c = pm_bounds(epsilon)
    left = (c + 1) / 2 * t - (c - 1) / 2
    right = left + c - 1
    centre = generator.random(t.shape) < math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)
    u = generator.random(t.shape)
    inside = left + u * (c - 1)
    y = u * (c + 1)  # the two outer pieces have total length C + 1
    outside = np.where(y < left + c, -c + y, right + (y - (left + c)))
    return np.where(centre, inside, outside)


def pm_density(y: np.ndarray, t: float, epsilon: float) -> np.ndarray:
    """PM-ONE's output density at ``y`` for input ``t`` (closed form: p inside [l(t), r(t)], p/e^eps
    elsewhere in [-C, C], with p = (e^eps - e^(eps/2)) / (2 e^(eps/2) + 2))."""
    c = pm_bounds(epsilon)
    left = (c + 1) / 2 * t - (c - 1) / 2
    right = left + c - 1
    p = (math.exp(epsilon) - math.exp(epsilon / 2)) / (2 * math.exp(epsilon / 2) + 2)
    y = np.asarray(y, dtype=np.float64)
    return np.where((y >= left) & (y <= right), p, p / math.exp(epsilon)) * (np.abs(y) <= c)


def pm_coordinates(k: int, epsilon: float) -> int:
    """m = max(1, min(k, floor(eps / 2.5))): how many coordinates the multidimensional PM reports."""
    return max(1, min(k, int(math.floor(epsilon / 2.5))))


def pm(z: np.ndarray, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """Multidimensional PM (paper 004 Algorithm 3) on every row of ``z`` (n x k, in [-1, 1])."""
    z = np.asarray(z, dtype=np.float64)
    n, k = z.shape
    m = pm_coordinates(k, epsilon)
    chosen = np.argsort(generator.random((n, k)), axis=1)[:, :m]  # m of k without replacement
    out = np.zeros_like(z)
    values = np.take_along_axis(z, chosen, axis=1)
    np.put_along_axis(out, chosen, k / m * pm_one(values, epsilon / m, generator), axis=1)
    return out


# --- Duchi et al. ----------------------------------------------------------------------------------


def duchi_scale(k: int, epsilon: float) -> float:
    """B = 2^(k-1) / binom(k-1, floor((k-1)/2)) * (e^eps + 1) / (e^eps - 1): the output is {-B, B}^k."""
    if not epsilon > 0 or k < 1:
        raise ValueError(f"need epsilon > 0 and k >= 1, got {epsilon}, {k}")
    return 2 ** (k - 1) / math.comb(k - 1, (k - 1) // 2) * (math.exp(epsilon) + 1) / math.expm1(epsilon)


def duchi(z: np.ndarray, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """Duchi et al.'s mechanism on every row of ``z`` (n x k, in [-1, 1]): v_j = +-1 with
    P(v_j = 1) = (1 + z_j)/2; t uniform on {-1, 1}^k, its sign chosen so that t.v >= 0 with
    probability e^eps/(e^eps + 1) (else t.v <= 0); output B t."""
    z = np.asarray(z, dtype=np.float64)
    v = np.where(generator.random(z.shape) < (1 + z) / 2, 1.0, -1.0)
    t = np.where(generator.random(z.shape) < 0.5, 1.0, -1.0)
    agree = generator.random(len(z)) < math.exp(epsilon) / (math.exp(epsilon) + 1)
    dot = (t * v).sum(1)
    flip = np.where(agree, dot < 0, dot > 0)
    t[flip] *= -1
    return duchi_scale(z.shape[1], epsilon) * t


def duchi_probabilities(v: np.ndarray, epsilon: float) -> np.ndarray:
    """Exact P(output sign vector t | v) for every t of {-1, 1}^k (rows: t in itertools.product
    order, columns: rows of ``v``, sign vectors).  P(t | z) is its mixture over v."""

    k = v.shape[1]
    cube = np.array(list(itertools.product([-1.0, 1.0], repeat=k)))
    dot = cube @ np.asarray(v, dtype=np.float64).T
    e = math.exp(epsilon)
    pos = np.where(dot > 0, 2.0, np.where(dot == 0, 1.0, 0.0))  # t, -t pairs: ties keep half the weight
    neg = np.where(dot < 0, 2.0, np.where(dot == 0, 1.0, 0.0))
    return (e * pos + neg) / ((e + 1) * 2**k)


# --- Laplace on the box ----------------------------------------------------------------------------


def laplace_box(z: np.ndarray, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """Laplace(2k/eps) on every coordinate of every row of ``z`` (n x k)."""
    z = np.asarray(z, dtype=np.float64)
    if not epsilon > 0:
        raise ValueError(f"need epsilon > 0, got {epsilon}")
    return z + generator.laplace(0.0, 2.0 * z.shape[1] / epsilon, size=z.shape)


SANITIZERS = {"pm": pm, "duchi": duchi, "laplacebox": laplace_box}


def sanitize(name: str, p: np.ndarray, epsilon: float, generator: np.random.Generator) -> np.ndarray:
    """An owner's sanitized answers: probability vectors (rows of ``p``) -> randomized box points."""
    return SANITIZERS[name](to_box(p), epsilon, generator)


# --- budget ----------------------------------------------------------------------------------------


def answer_epsilon(total_epsilon: float, loads: np.ndarray) -> float:
    """Per-answer epsilon such that the owner that answers most spends at most ``total_epsilon``
    (sequential composition; ``loads``: how many answers each owner gives)."""
    worst = int(np.max(loads)) if len(loads) else 0
    if worst < 1:
        raise ValueError("no owner answers any query")
    return total_epsilon / worst


def owner_guarantee(name: str, per_answer: float, answers: int) -> Guarantee:
    """One owner's record: ``answers`` sanitized answers, each ``per_answer``-LDP, composed."""
    return Guarantee(
        per_answer * answers,
        0.0,
        Adjacency.LOCAL,
        UNIT,
        f"sequential composition of {answers} answers, each {per_answer:.6g}-LDP ({NAMES[name]})",
        answers,
    )
