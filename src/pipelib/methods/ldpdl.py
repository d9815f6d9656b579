"""LDP-DL (paper 004, Algorithm 1), and the teachers PATE shares with it: the parts that are not mechanisms,
the teachers' training (:mod:`pipelib.methods.teachers`) or the server's student
(:mod:`pipelib.methods.student`).  Free of torch: the plan and curator jobs do no tensor work (the
owners' answers, which may run a frozen CNN, are in :mod:`pipelib.methods.teachers`).

* The owners (:func:`owner_records`): ``L<n>`` = L owners each holding its own sample of
  ``records`` private records drawn independently (so owners overlap, as in the paper's regime);
  ``T<n>`` = n disjoint shards of the pool (PATE's teachers); ``parties`` = the scenario's parties.
* Teachers (:func:`pipelib.methods.teachers.fit_heads`, the owners' job): one per owner, trained on
  that owner's records only, all in one batched job: a ridge least-squares classifier on features of a
  fixed encoder that holds no owner's data (HOG, or a CNN trained on another labelled dataset), its
  scores turned into a softmax at a temperature fitted on the owner's own records.
* The query plan (server, public randomness): |X^Q| = S x iterations query slots, each answered by
  N_Q distinct owners; every owner answers at most ceil(S x iterations x N_Q / L) times
  (:func:`query_slots`), its load is known before any query is chosen, and each of its answers gets
  epsilon / its load.  Which public sample fills a slot is decided later, iteration by iteration
  (active or random query sampling).
* Owners answer only the queries the plan assigns to them, from their own teacher, sanitized on
  their side (:func:`release`); the release also reports each private record's epsilon, composed over
  the owners that hold it (:func:`holders`).
* The server averages the sanitized answers of each query (:func:`server_targets`), turns the
  estimate into a probability vector (Euclidean projection onto the simplex: post-processing), and
  trains the student with the two-temperature loss of paper 004 Eq. 4
  (:func:`pipelib.methods.student.kd_loss`).
* Active query sampling (Eq. 5): sum_l (P* - P_l) / (k - 1) = (k P* - 1) / (k - 1) is increasing in the
  student's top probability P*, so the S samples with the smallest top probability are queried
  (:func:`least_confident`); the first iteration, and "without AQS", draw S uniformly at random.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..io import save_npy, write_json
from ..job import Job
from ..privacy import soft_label
from ..runs import LdpdlRun
from ..seeding import random_queries, rng

log = logging.getLogger(__name__)


def answer_cap(slots: int, owners: int, per_query: int) -> int:
    """The most answers any owner gives: the slots' answers spread as evenly as they go."""
    return -(-slots * per_query // owners)


def query_slots(slots: int, owners: int, per_query: int, generator: np.random.Generator) -> np.ndarray:
    """(slots x per_query) owner ids: every query slot's N_Q distinct owners, no owner in more than
    :func:`answer_cap` slots.  The slots read a stream of random permutations of the owners, N_Q at a
    time; where a slot straddles two permutations, an owner met twice is swapped with a later owner of
    the second permutation (each permutation stays one, so every owner answers cap or cap - 1 times)."""
    if not 1 <= per_query <= owners:
        raise ValueError(f"N_Q = {per_query} owners per query needs 1 <= N_Q <= L = {owners}")
    need = slots * per_query
    stream = np.concatenate([generator.permutation(owners) for _ in range(answer_cap(slots, owners, per_query))])
    for start in range(0, need, per_query):
        end = start + per_query
        boundary = (start // owners + 1) * owners
        if not start < boundary < end:
            continue
        head = set(stream[start:boundary].tolist())
        for pos in range(boundary, end):
            if stream[pos] not in head:
                continue
            later = [j for j in range(end, boundary + owners) if stream[j] not in head]
            if not later:
                raise ValueError(f"cannot give N_Q = {per_query} distinct owners to a query slot with L = {owners}")
            j = later[int(generator.integers(len(later)))]
            stream[pos], stream[j] = stream[j], stream[pos]
    return stream[:need].reshape(slots, per_query)


# Paper 004 Table 1's result rows per entry (pipelib.design.Design.ldpdl_table_entries) and each one's
# teacher_arm: PATE on LDP-DL's teacher family (isolates the mechanism) or on its own teachers (the paper's
# comparison: its PATE ran with its authors' code)
TABLE_ARMS = {"ldpdl": "", "pate": "same", "pate_own": "own"}


def teacher_model(settings: dict) -> str:
    """Teachers of ``settings`` (:meth:`pipelib.design.Design.teacher_settings`) in words (tables, teachers.json)."""
    if "scratch" in settings:
        c = settings["scratch"]
        return f"{c['arch']} from scratch ({c['epochs']} epochs)"
    e = settings["encoder"]
    if e.get("kind") == "transfer":
        return f"ridge heads on a frozen {e['arch']} trained on {e['source']}" + (" (+ HOG)" if e.get("hog") else "")
    return f"ridge heads on {e.get('kind', 'hog').upper()} features"


def owner_records(design: str, party_sizes, records: int, seed: int, scenario: str) -> list[np.ndarray]:
    """Each owner's (or teacher's) private records, as sorted row indices into the scenario's pool (its
    party tables, concatenated in party order).  ``L<n>``: n owners, each ``records`` rows drawn without
    replacement by its own keyed draw (owners overlap); ``T<n>`` and ``S<n>`` (PATE's teachers: heads, or
    CNNs from scratch): a keyed permutation of the pool cut into n disjoint near-equal shards, the same
    shards for both; ``parties``: every party's rows."""
    sizes = [int(n) for n in party_sizes]
    pool = sum(sizes)
    if design == "parties":
        edges = np.cumsum([0] + sizes)
        return [np.arange(a, b) for a, b in zip(edges[:-1], edges[1:])]
    kind, count = design[0], int(design[1:])
    if kind == "L":
        if not 1 <= records <= pool:
            raise ValueError(f"owners of {records} records each need 1 <= records <= the pool's {pool}")
        draw = [rng(seed, "ldpdl-owner", scenario, owner) for owner in range(count)]
        return [np.sort(g.choice(pool, records, replace=False)) for g in draw]
    if kind in ("T", "S"):
        if not 1 <= count <= pool:
            raise ValueError(f"{count} disjoint teachers need 1 <= teachers <= the pool's {pool} records")
        return [np.sort(part) for part in np.array_split(rng(seed, "pate-teachers", scenario).permutation(pool), count)]
    raise ValueError(f"owner design {design!r} is not L<owners>, T<teachers>, S<teachers> or parties")


def holders(record_sets: list[np.ndarray], pool: int, weights=None) -> np.ndarray:
    """Per pool record: how many owners hold it, or the sum of ``weights`` (one per owner) over them."""
    w = np.ones(len(record_sets)) if weights is None else np.asarray(weights, dtype=np.float64)
    out = np.zeros(pool)
    for owner, rows in enumerate(record_sets):
        if w[owner]:
            out[rows] += w[owner]
    return out


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


def augment(features: np.ndarray) -> np.ndarray:
    """Features with a constant 1 appended (the heads' intercept)."""
    features = np.asarray(features, dtype=np.float32)
    return np.hstack([features, np.ones((len(features), 1), np.float32)])


def head_soft(weights: np.ndarray, temperature: float, features: np.ndarray) -> np.ndarray:
    """One teacher's soft labels (softmax of its scores at its temperature) on ``features`` rows."""
    z = augment(features).astype(np.float64) @ np.asarray(weights, dtype=np.float64) / float(temperature)
    z -= z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


class Owner:
    """One data owner: its own teacher (weights and temperature), and nothing of any other owner."""

    def __init__(self, owner: int, weights: np.ndarray, temperature: float):
        self.owner, self.weights, self.temperature = int(owner), weights, float(temperature)

    def soft(self, features: np.ndarray) -> np.ndarray:
        """The teacher's soft labels on public samples (their ``features``)."""
        return head_soft(self.weights, self.temperature, features)

    def answer(self, features: np.ndarray, mechanism, generator) -> np.ndarray:
        """Sanitized answers to public samples (one per row of ``features``), each by ``mechanism`` (a
        registered soft-label sanitizer, :mod:`pipelib.privacy.registry`, at its per-answer epsilon)."""
        return mechanism.release(self.soft(features), generator)

    def votes(self, features: np.ndarray) -> np.ndarray:
        """The teacher's labels (PATE: raw votes, for the trusted curator only)."""
        return self.soft(features).argmax(1)


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


# --- the jobs ---------------------------------------------------------------------------------------
# Rules: ldpdl_teachers (the owners' job: every owner's teacher on its own records, or PATE's teachers),
# ldpdl_plan (server), ldpdl_release (every owner's sanitizer of one iteration's answers, each with its
# own teacher), ldpdl_student (server: one AQS iteration).  PATE runs in the distillation stage on the
# same teachers (pipelib.methods.pate); its teachers' votes are made here (teacher_votes, rule distill_votes).

METHOD = "LDP-DL"


def load_owners(path) -> tuple[np.ndarray, np.ndarray]:
    """The teachers file of :func:`train_teachers`: (weights, temperatures)."""
    with np.load(path) as f:
        return f["weights"], f["temperatures"]


def owner_epsilons(total_epsilon: float, load: np.ndarray) -> np.ndarray:
    """Each owner's per-answer epsilon: the total over its own number of answers (0 if it never answers)."""
    load = np.asarray(load)
    return np.where(load > 0, total_epsilon / np.maximum(load, 1), 0.0)


def plan_key(release: dict) -> str:
    """The key of a query plan (and of its random queries): one per (scenario, N_Q, owner design)."""
    return f"{release['scenario']}/q{release['nq']}/{release['design']}"


def run_keys(release: dict) -> dict:
    """An LDP-DL run's names from its wildcards: scenario, mechanism, design, its key (seeds its student)
    and its plan's key."""
    r = release
    return {
        "scenario": r["scenario"],
        "mechanism": r["ldmech"],
        "key": f"{r['scenario']}/{LdpdlRun.of(r)}",
        "plan_key": plan_key(r),
        "design": r["design"],
    }


def plan(job: Job, *, owners: int, public_n: int, per_iteration: int, iterations: int) -> dict:
    """The server's query plan (public randomness, keyed by the run): every query slot's owners (no owner
    more than :func:`answer_cap` times), the owners' loads, and the first iteration's queries (outputs
    ``plan`` and ``queries``).  The same plan serves every mechanism, epsilon and query sampling of the
    job's (scenario, nq, design): paired runs."""

    key, seed = plan_key(job.release), job.seed
    per_query, total_epsilon = int(job["nq"]), float(job["eps"])

    if per_iteration * iterations > public_n:
        raise ValueError(f"{iterations} iterations of {per_iteration} queries need more than {public_n} public samples")
    g = rng(seed, "ldpdl-plan", key)
    slots = query_slots(per_iteration * iterations, owners, per_query, g)
    load = loads(slots, owners)
    out = {
        "owners": owners,
        "per_iteration": per_iteration,
        "iterations": iterations,
        "per_query": per_query,
        "cap": answer_cap(per_iteration * iterations, owners, per_query),
        "total_epsilon": total_epsilon,
        "per_answer_epsilon": None if total_epsilon is None else soft_label.answer_epsilon(total_epsilon, load),
        "loads": load.tolist(),
        "slots": slots.tolist(),
    }
    write_json(out, job.output["plan"])
    queries = random_queries(np.arange(public_n), per_iteration, rng(seed, "ldpdl-queries", key, 1))
    save_npy(queries, job.output["queries"])
    return out


def answered(plan: dict, iterations: int) -> np.ndarray:
    """Every owner's answers in the plan's first ``iterations`` iterations."""
    slots = np.asarray(plan["slots"])[: iterations * plan["per_iteration"]]
    return loads(slots, plan["owners"])


def owner_ledger(plan: dict, iterations: int, mechanism: str):
    """One row per owner (those that never answered too): its answers in the first ``iterations``
    iterations, its per-answer epsilon, and the epsilon they compose to (sequential composition)."""

    done = answered(plan, iterations)
    per_answer = owner_epsilons(plan["total_epsilon"], np.asarray(plan["loads"]))
    return pd.DataFrame(
        {
            "owner": np.arange(plan["owners"]),
            "mechanism": mechanism,
            "answers": done,
            "load": plan["loads"],
            "per_answer_epsilon": per_answer,
            "epsilon": per_answer * done,
            "delta": 0.0,
        }
    )


def answer_epsilon_range(ledger) -> tuple[float, float]:
    """(smallest, largest) per-answer epsilon over the owners that answer at all: the busiest owner's
    epsilon / its load and the least busy one's.  Equal when every owner carries the same load."""
    per = ledger.loc[ledger["load"] > 0, "per_answer_epsilon"]
    return float(per.min()), float(per.max())


def owner_guarantee_of(row: dict):
    """The guarantee of one row of :func:`owner_ledger`."""
    return soft_label.owner_guarantee(row["mechanism"], float(row["per_answer_epsilon"]), int(row["answers"]))
