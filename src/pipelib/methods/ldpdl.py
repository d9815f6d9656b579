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

import re

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


def by_owner(paths) -> dict:
    """Owner id -> path, for paths under an owner's folder (``.../party-<i>/...``)."""
    return {int(re.search(r"party-(\d+)/", str(path)).group(1)): path for path in paths}


class Owner:
    """One data owner: its teacher's soft labels on the public pool, and nothing of any other owner."""

    def __init__(self, owner: int, soft_labels: np.ndarray):
        self.owner, self.soft = int(owner), np.asarray(soft_labels, dtype=np.float64)

    def answer(self, queries: np.ndarray, mechanism, generator) -> np.ndarray:
        """Sanitized answers to the public samples ``queries`` (one per row), each by ``mechanism`` (a
        registered soft-label sanitizer, :mod:`pipelib.privacy.registry`, at its per-answer epsilon)."""
        return mechanism.release(self.soft[np.asarray(queries)], generator)

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


# --- the jobs ---------------------------------------------------------------------------------------
# Rules: ldpdl_teacher (an owner's job), ldpdl_plan (server), ldpdl_release (every owner's sanitizer of
# one iteration's answers, one owner's file at a time), ldpdl_student (server: one AQS iteration),
# pate_curate (PATE's trusted curator) and pate_student (server).

METHOD = "LDP-DL"
PATE = "PATE"


def train_teacher(
    *,
    owner: int,
    scenario: str,
    party_path,
    public_path,
    settings: dict,
    device: str,
    threads: int,
    seed: int,
    out_model,
    out_soft,
    out_info,
) -> None:
    """An owner's job: its teacher, trained on its own shard only, and the teacher's softmax on every
    public sample (kept in the owner's folder: only sanitized answers to assigned queries leave it)."""
    import torch

    from ..data.loaders import load_labelled, load_public
    from ..io import save_npy, write_json
    from ..seeding import torch_seed
    from ..train import loop
    from ..train.models import build, optimizer
    from ..train.supervised import TrainSettings, save_model, train_supervised

    loop.set_threads(threads)
    dev = loop.pick_device(device)
    x, y, meta = load_labelled(party_path, dev)
    x_pub, _ = load_public(public_path, dev)
    gen = loop.seed_everything(torch_seed(seed, "ldpdl-teacher", scenario, owner))
    model = loop.prepare(build(settings["arch"], x.shape[1:], len(meta["task_classes"])), dev)
    train = TrainSettings.from_config(settings)
    train_supervised(model, optimizer(model, train.lr), x, y, train, gen, name=f"teacher of owner {owner}")
    save_npy(torch.softmax(loop.predict(model, x_pub), 1).cpu().numpy().astype(np.float64), out_soft)
    save_model(model, out_model, scenario=scenario, owner=owner, records=len(x))
    write_json({"owner": owner, "records": len(x), "classes": len(meta["task_classes"])}, out_info)


def plan(
    *,
    key: str,
    owners: int,
    public_n: int,
    per_iteration: int,
    iterations: int,
    per_query: int,
    total_epsilon: float | None,
    seed: int,
    out_plan,
    out_queries,
) -> dict:
    """The server's query plan (public randomness, keyed by the run): every query slot's owners, the
    owners' loads, the per-answer epsilon from the busiest owner, and the first iteration's queries."""
    from ..io import save_npy, write_json
    from ..seeding import rng

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
        "total_epsilon": total_epsilon,
        "per_answer_epsilon": None if total_epsilon is None else soft_label.answer_epsilon(total_epsilon, load),
        "loads": load.tolist(),
        "slots": slots.tolist(),
    }
    write_json(out, out_plan)
    save_npy(random_queries(np.arange(public_n), per_iteration, rng(seed, "ldpdl-queries", key, 1)), out_queries)
    return out


def release(
    *,
    release_id: dict,
    iteration: int,
    mechanism: str,
    plan_path,
    queries_path,
    soft_paths: dict,
    info_paths: dict,
    seed: int,
    randomness: str,
    rule: str,
    scenario: str,
    out_release,
    out_guarantee,
) -> None:
    """Every owner's side of one iteration: each owner answers the queries the plan assigns to it from
    its own soft labels only, sanitized with its own release-keyed randomness.  Out: the sanitized
    answers (queries x N_Q x k, box scale) and one ledger row per owner that answered."""
    from ..io import load_npy, read_json, save_npy
    from ..privacy import registry, release_row, write_releases
    from ..seeding import release_key, release_rng

    p = read_json(plan_path)
    queries = load_npy(queries_path)
    s = p["per_iteration"]
    slots = np.asarray(p["slots"])[(iteration - 1) * s : iteration * s]
    mech = registry.parse(f"{mechanism}-eps{p['per_answer_epsilon']!r}")
    if mech.locality != "soft-label":
        raise ValueError(f"{mechanism!r} is not a soft-label sanitizer")
    records = {int(o): int(read_json(path)["records"]) for o, path in info_paths.items()}
    answers, rows = None, []
    for owner in sorted(int(o) for o in soft_paths):
        rows_, cols = np.nonzero(slots == owner)
        if not len(rows_):
            continue
        who = Owner(owner, load_npy(soft_paths[owner]))  # this owner's file only
        key = {**release_id, "owner": owner}
        out = who.answer(queries[rows_], mech, release_rng(seed, randomness, rule, key))
        if answers is None:
            answers = np.zeros((len(slots), slots.shape[1], out.shape[1]))
        answers[rows_, cols] = out
        rows.append(
            release_row(
                METHOD,
                scenario,
                str(out_release),
                owner,
                mech.name,
                mech.guarantee(len(rows_)),
                randomness=randomness,
                release_key=release_key(rule, key),
                n=len(rows_),
                seed=seed,
                records=records[owner],
                pool_records=sum(records.values()),
            )
        )
    save_npy(answers, out_release)
    write_releases(rows, out_guarantee)


def worst_owner(guarantee_paths: list, mechanism: str, per_answer: float):
    """Every owner's answers summed over the releases so far, the guarantee of the busiest owner, and
    the owners' private records in all."""
    from ..privacy import read_releases

    answers: dict[int, int] = {}
    pool = 0
    for path in guarantee_paths:
        for r in read_releases(path):
            answers[int(r["party"])] = answers.get(int(r["party"]), 0) + int(r["n"])
            pool = int(r["pool_records"])
    return answers, soft_label.owner_guarantee(mechanism, per_answer, max(answers.values())), pool


def owner_ledger(answers: dict, owners: int, mechanism: str, per_answer: float):
    """One row per owner (those that never answered too): its answers so far and the guarantee they
    compose to (sequential composition of ``per_answer``-LDP answers)."""
    import pandas as pd

    rows = []
    for owner in range(owners):
        g = soft_label.owner_guarantee(mechanism, per_answer, answers.get(owner, 0))
        rows.append({"owner": owner, "answers": answers.get(owner, 0), **g.row()})
    return pd.DataFrame(rows)


class ServerStudent:
    """The server's side of a run: the public and test images, a student trained from scratch on the
    queried public samples with Eq. 4, and its result row.  Shared by LDP-DL and PATE."""

    def __init__(self, *, public_path, test_path, settings: dict, loss: dict, device: str, threads: int):
        import time

        from ..data.loaders import load_labelled, load_public
        from ..train import loop

        self.t0 = time.perf_counter()
        loop.set_threads(threads)
        self.dev = loop.pick_device(device)
        self.public_path, self.settings, self.loss = public_path, settings, loss
        self.x_pub, self.pub_meta = load_public(public_path, self.dev)
        self.x_test, self.y_test, self.meta = load_labelled(test_path, self.dev)

    def fit(self, idx: np.ndarray, targets: np.ndarray, seed: int, name: str):
        """A student from scratch on (public samples ``idx``, target distributions ``targets``)."""
        import torch

        from ..train import loop
        from ..train.models import build, optimizer
        from ..train.supervised import TrainSettings, train_supervised

        self.idx, self.targets = np.asarray(idx), np.asarray(targets, dtype=np.float64)
        gen = loop.seed_everything(seed)
        x = self.x_pub[torch.as_tensor(self.idx, device=self.dev)]
        model = loop.prepare(build(self.settings["arch"], x.shape[1:], len(self.meta["task_classes"])), self.dev)
        train = TrainSettings.from_config(self.settings)
        y = torch.as_tensor(self.targets.astype(np.float32), device=self.dev)
        loss = kd_loss(float(self.loss["alpha"]), float(self.loss["beta"]), float(self.loss["tau"]))
        train_supervised(model, optimizer(model, train.lr), x, y, train, gen, name=name, loss=loss)
        self.model = model
        return model

    def probabilities(self) -> np.ndarray:
        """The student's softmax on every public sample (active query sampling)."""
        import torch

        from ..train import loop

        return torch.softmax(loop.predict(self.model, self.x_pub), 1).cpu().numpy()

    def row(self, guarantee, *, method: str, scenario: str, mechanism: str, n: int, seed: int, preset: str, **extra):
        """The result row: test accuracy, label accuracy of the targets (evaluation only: the public
        table's true labels), the guarantee, and ``extra`` columns."""
        import time

        from ..io import read_table
        from ..privacy import delta_vacuous
        from ..schema import result_row
        from ..train import loop

        truth = read_table(self.public_path, columns=["label"]).column("label").to_numpy()[self.idx]
        return result_row(
            guarantee,
            method=method,
            scenario=scenario,
            public_dataset=self.pub_meta["dataset"],
            private_dataset=self.meta["dataset"],
            mechanism=mechanism,
            delta_vacuous=delta_vacuous(guarantee.delta, n),
            accuracy=loop.accuracy(self.model, self.x_test, self.y_test),
            label_accuracy=float((self.targets.argmax(1) == truth).mean()),
            n=n,
            queries=len(self.idx),
            public_n=len(self.x_pub),
            test_n=len(self.x_test),
            wall_seconds=time.perf_counter() - self.t0,
            **loop.where(self.dev),
            seed=seed,
            preset=preset,
            **extra,
        )


def student_iteration(
    *,
    run: dict,
    iteration: int,
    plan_path,
    queries_paths: list,
    release_paths: list,
    guarantee_paths: list,
    public_path,
    test_path,
    settings: dict,
    loss: dict,
    aqs: bool,
    device: str,
    threads: int,
    seed: int,
    preset: str,
    randomness: str,
    out_result,
    out_next,
    out_model,
    out_owners,
) -> dict:
    """The server, one AQS iteration: targets from the sanitized answers of iterations 1..t, a student
    trained from scratch on every sample queried so far, its test accuracy, and the next iteration's
    queries (the S least confident samples under this student with AQS, else S at random)."""
    from ..io import load_npy, read_json, save_npy, write_csv, write_json
    from ..seeding import rng, torch_seed
    from ..train.supervised import save_model

    p = read_json(plan_path)
    idx = np.concatenate([load_npy(q) for q in queries_paths])
    targets = np.concatenate([server_targets(load_npy(r)) for r in release_paths])
    server = ServerStudent(
        public_path=public_path, test_path=test_path, settings=settings, loss=loss, device=device, threads=threads
    )
    server.fit(
        idx, targets, torch_seed(seed, "ldpdl-student", run["key"], iteration), f"student, iteration {iteration}"
    )
    available = np.setdiff1d(np.arange(len(server.x_pub)), idx)
    s = min(p["per_iteration"], len(available))
    if aqs:
        nxt = least_confident(server.probabilities(), available, s)
    else:
        nxt = random_queries(available, s, rng(seed, "ldpdl-queries", run["plan_key"], iteration + 1))
    save_npy(nxt, out_next)
    answers, guarantee, pool = worst_owner(guarantee_paths, run["mechanism"], p["per_answer_epsilon"])
    write_csv(owner_ledger(answers, p["owners"], run["mechanism"], p["per_answer_epsilon"]), out_owners)
    row = server.row(
        guarantee,
        method=METHOD,
        scenario=run["scenario"],
        mechanism=run["mechanism"],
        n=pool,
        seed=seed,
        preset=preset,
        parties=p["owners"],
        owners=p["owners"],
        per_query=p["per_query"],
        aqs=bool(aqs),
        iteration=iteration,
        iterations=p["iterations"],
        total_epsilon=p["total_epsilon"],
        per_answer_epsilon=p["per_answer_epsilon"],
        max_answers=max(answers.values()),
        mean_answers_paper=p["per_iteration"] * p["iterations"] * p["per_query"] / p["owners"],
        randomness=randomness,
    )
    write_json(row, out_result)
    save_model(server.model, out_model, scenario=run["scenario"], mechanism=run["mechanism"], iteration=iteration)
    return row


def pate_curate(
    *,
    release_id: dict,
    scenario: str,
    epsilon: float,
    delta: float,
    queries: int,
    soft_paths: dict,
    info_paths: dict,
    seed: int,
    randomness: str,
    rule: str,
    out_labels,
    out_guarantee,
) -> None:
    """PATE's trusted curator: every owner's teacher votes on ``queries`` public samples drawn at random
    (public randomness), GNMax with sigma calibrated to (epsilon, delta) releases the noisy argmax."""
    from ..io import load_npy, read_json, write_json
    from ..privacy import pate, release_row, write_releases
    from ..seeding import release_key, release_rng, rng

    owners = [Owner(o, load_npy(soft_paths[o])) for o in sorted(soft_paths)]
    public_n, k = owners[0].soft.shape  # every teacher's softmax has one row per public sample
    idx = random_queries(np.arange(public_n), queries, rng(seed, "pate-queries", scenario, queries))
    votes = np.stack([o.votes(idx) for o in owners])
    records = sum(int(read_json(path)["records"]) for path in info_paths.values())
    sigma = pate.gnmax_sigma(epsilon, delta, queries)
    labels = pate.gnmax(vote_counts(votes, k), sigma, release_rng(seed, randomness, rule, release_id))
    write_json(
        {"queries": idx.tolist(), "labels": labels.tolist(), "classes": k, "sigma": sigma, "teachers": len(soft_paths)},
        out_labels,
    )
    write_releases(
        [
            release_row(
                PATE,
                scenario,
                str(out_labels),
                -1,
                "gnmax",
                pate.guarantee(sigma, queries, delta),
                randomness=randomness,
                release_key=release_key(rule, release_id),
                n=records,
                k=k,
                sigma=sigma,
                seed=seed,
                queries=queries,
            )
        ],
        out_guarantee,
    )


def pate_student(
    *,
    scenario: str,
    labels_path,
    guarantee_path,
    public_path,
    test_path,
    settings: dict,
    loss: dict,
    device: str,
    threads: int,
    seed: int,
    preset: str,
    randomness: str,
    out_result,
    out_model,
) -> dict:
    """The server: a student on PATE's noisy labels (one-hot targets: Eq. 4's two terms are then the
    cross-entropy with the noisy label at temperatures 1 and tau)."""
    from ..io import read_json, write_json
    from ..privacy import Guarantee, read_releases
    from ..seeding import torch_seed
    from ..train.supervised import save_model

    lab = read_json(labels_path)
    server = ServerStudent(
        public_path=public_path, test_path=test_path, settings=settings, loss=loss, device=device, threads=threads
    )
    server.fit(
        np.asarray(lab["queries"]),
        np.eye(lab["classes"])[np.asarray(lab["labels"])],
        torch_seed(seed, "pate-student", scenario),
        "PATE student",
    )
    (g,) = read_releases(guarantee_path)
    row = server.row(
        Guarantee.from_row(g),
        method=PATE,
        scenario=scenario,
        mechanism="gnmax",
        n=int(g["n"]),
        seed=seed,
        preset=preset,
        parties=lab["teachers"],
        owners=lab["teachers"],
        sigma=lab["sigma"],
        randomness=randomness,
    )
    write_json(row, out_result)
    save_model(server.model, out_model, scenario=scenario, mechanism="gnmax")
    return row
