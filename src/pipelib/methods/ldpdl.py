"""LDP-DL (paper 004, Algorithm 1) and PATE on the same teachers: the parts that are not mechanisms.

* The owners (:func:`owner_records`): ``L<n>`` = L owners each holding its own sample of
  ``records`` private records drawn independently (so owners overlap, as in the paper's regime);
  ``T<n>`` = n disjoint shards of the pool (PATE's teachers); ``parties`` = the scenario's parties.
* Teachers (:func:`fit_heads`): one per owner, trained on that owner's records only, all in one
  batched job: a ridge least-squares classifier on features of a fixed, data-independent encoder (HOG),
  its scores turned into a softmax at a temperature fitted on the owner's own records.
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
  trains the student with the two-temperature loss of paper 004 Eq. 4 (:func:`kd_loss`).
* Active query sampling (Eq. 5): sum_l (P* - P_l) / (k - 1) = (k P* - 1) / (k - 1) is increasing in the
  student's top probability P*, so the S samples with the smallest top probability are queried
  (:func:`least_confident`); the first iteration, and "without AQS", draw S uniformly at random.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ..job import Job
from ..privacy import soft_label
from ..seeding import rng

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


def owner_records(design: str, party_sizes, records: int, seed: int, scenario: str) -> list[np.ndarray]:
    """Each owner's (or teacher's) private records, as sorted row indices into the scenario's pool (its
    party tables, concatenated in party order).  ``L<n>``: n owners, each ``records`` rows drawn without
    replacement by its own keyed draw (owners overlap); ``T<n>``: a keyed permutation of the pool cut
    into n disjoint near-equal shards; ``parties``: every party's rows."""
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
    if kind == "T":
        if not 1 <= count <= pool:
            raise ValueError(f"{count} disjoint teachers need 1 <= teachers <= the pool's {pool} records")
        return [np.sort(part) for part in np.array_split(rng(seed, "pate-teachers", scenario).permutation(pool), count)]
    raise ValueError(f"owner design {design!r} is not L<owners>, T<teachers> or parties")


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


def random_queries(available: np.ndarray, s: int, generator: np.random.Generator) -> np.ndarray:
    """``s`` samples of ``available`` uniformly at random without replacement; sorted."""
    available = np.sort(np.asarray(available))
    if s > len(available):
        raise ValueError(f"asked for {s} queries but only {len(available)} public samples are left")
    return np.sort(generator.choice(available, size=s, replace=False))


def augment(features: np.ndarray) -> np.ndarray:
    """Features with a constant 1 appended (the heads' intercept)."""
    features = np.asarray(features, dtype=np.float32)
    return np.hstack([features, np.ones((len(features), 1), np.float32)])


def fit_temperature(scores, truth, mask, steps: int = 12):
    """Per teacher, the softmax temperature T of its scores that maximises the likelihood of its own
    labels: Newton's method on beta = 1/T (the negative log-likelihood is convex in beta), beta kept in
    [1, 1e4].  ``scores``: teachers x rows x k; ``truth``: teachers x rows; ``mask``: 1 for real rows."""
    import torch

    beta = torch.full((scores.shape[0], 1, 1), 10.0, dtype=torch.float64)
    s = scores.double()
    s_true = s.gather(2, truth[..., None])
    m = mask.double()
    for _ in range(steps):
        p = torch.softmax(beta * s, 2)
        mean = (p * s).sum(2, keepdim=True)
        grad = ((mean - s_true) * m).sum((1, 2))
        hess = (((p * s * s).sum(2, keepdim=True) - mean**2) * m).sum((1, 2)).clamp_min(1e-12)
        beta = (beta - (grad / hess)[:, None, None]).clamp(1.0, 1e4)
    return (1.0 / beta[:, 0, 0]).numpy()


def fit_heads(features: np.ndarray, labels: np.ndarray, record_sets: list, k: int, ridge: float, batch: int = 64):
    """One teacher per record set, each fitted on its own rows of (``features``, ``labels``) only.

    A teacher is a ridge least-squares fit of the one-hot label on the features and an intercept (the
    penalty ``ridge`` x its record count on every weight but the intercept's), then a softmax of its
    scores at the temperature that maximises the likelihood of its own labels (:func:`fit_temperature`).
    Batched: ``batch`` teachers' normal equations at a time; a teacher's result depends on its rows only.
    Returns (weights: teachers x (d + 1) x k float32, temperatures, accuracy on its own records)."""
    import torch

    x = torch.from_numpy(augment(features))
    onehot = torch.nn.functional.one_hot(torch.as_tensor(np.asarray(labels, dtype=np.int64)), k).float()
    d = x.shape[1]
    weights = np.zeros((len(record_sets), d, k), np.float32)
    temps, fit_acc = np.zeros(len(record_sets)), np.zeros(len(record_sets))
    penalty = np.eye(d)
    penalty[-1, -1] = 0.0
    t0, every = time.perf_counter(), max(batch, len(record_sets) // 10 // batch * batch)
    for lo in range(0, len(record_sets), batch):
        if lo and lo % every == 0:
            took = time.perf_counter() - t0
            log.info(
                "teachers %d of %d fitted, %.0f s (about %.0f s left)",
                lo,
                len(record_sets),
                took,
                took * (len(record_sets) - lo) / lo,
            )
        sets = record_sets[lo : lo + batch]
        n = np.array([len(r) for r in sets])
        if (n < 1).any():
            raise ValueError("a teacher has no records")
        rows = torch.from_numpy(np.stack([np.pad(r, (0, n.max() - len(r))) for r in sets]).astype(np.int64))
        mask = torch.from_numpy(np.arange(n.max())[None, :] < n[:, None]).float()[..., None]
        xb, yb = x[rows].mul_(mask), onehot[rows].mul_(mask)  # padding rows are zero: they add nothing
        gram = torch.bmm(xb.transpose(1, 2), xb).double().numpy() + ridge * n[:, None, None] * penalty
        w = np.linalg.solve(gram, torch.bmm(xb.transpose(1, 2), yb).double().numpy()).astype(np.float32)
        scores = torch.bmm(xb, torch.from_numpy(w))
        truth = yb.argmax(2)
        weights[lo : lo + len(sets)] = w
        temps[lo : lo + len(sets)] = fit_temperature(scores, truth, mask)
        fit_acc[lo : lo + len(sets)] = ((scores.argmax(2) == truth).float() * mask[..., 0]).sum(1).numpy() / n
    return weights, temps, fit_acc


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
# Rules: ldpdl_teachers (the owners' job: every owner's teacher on its own records, or PATE's teachers),
# ldpdl_plan (server), ldpdl_release (every owner's sanitizer of one iteration's answers, each with its
# own teacher), ldpdl_student (server: one AQS iteration), pate_curate (PATE's trusted curator) and
# pate_student (server).

METHOD = "LDP-DL"
PATE = "PATE"


def encoder_features(images: np.ndarray, settings: dict) -> np.ndarray:
    """Teacher features of uint8 images: a data-independent encoder (HOG), so the features carry no
    information about any record but their own."""
    from ..represent import embed_images

    if settings["kind"] != "hog":
        raise ValueError(f"LDP-DL teachers need a data-independent (HOG) encoder; got kind {settings['kind']!r}")
    return embed_images(images, settings, (), "cpu")


def train_teachers(job: Job, settings: dict, *, records: int) -> dict:
    """The owners' job: every owner's (or PATE teacher's) teacher, each fitted on its own records of the
    pool only (:func:`owner_records`, :func:`fit_heads`).  In: the parties' records (input ``parties``).
    Out: the teachers (private: only sanitized answers or, for PATE, the curator's votes leave) and a
    summary (counts only): outputs ``teachers`` and ``info``."""
    from ..io import atomic_path, read_images, write_json
    from ..train import loop

    design, scenario, seed = job["design"], job.scenario, job.seed
    t0 = time.perf_counter()
    loop.set_threads(job.threads)
    frames, images, meta = [], [], None
    for path in job.input["parties"]:
        frame, imgs, meta = read_images(path)
        frames.append(frame["label"].to_numpy().astype(np.int64))
        images.append(imgs)
    sizes = [len(f) for f in frames]
    labels, k = np.concatenate(frames), len(meta["task_classes"])
    sets = owner_records(design, sizes, records, seed, scenario)
    features = encoder_features(np.concatenate(images), settings["encoder"])
    weights, temps, fit_acc = fit_heads(features, labels, sets, k, float(settings["ridge"]))
    with atomic_path(job.output["teachers"]) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, weights=weights, temperatures=temps)
    held = holders(sets, sum(sizes))
    info = {
        "design": design,
        "teachers": len(sets),
        "records_each": [int(min(map(len, sets))), int(max(map(len, sets)))],
        "pool_records": int(sum(sizes)),
        "party_sizes": sizes,
        "holders_per_record": {"min": int(held.min()), "mean": float(held.mean()), "max": int(held.max())},
        "fit_accuracy_mean": float(fit_acc.mean()),
        "features": int(features.shape[1]),
        "seconds": time.perf_counter() - t0,
    }
    write_json(info, job.output["info"])
    log.info(
        "%d teachers (%s) of %s records each on %d features: fit accuracy %.3f, %.0f s",
        len(sets),
        design,
        info["records_each"],
        features.shape[1],
        info["fit_accuracy_mean"],
        info["seconds"],
    )
    return info


def load_owners(path) -> tuple[np.ndarray, np.ndarray]:
    """The teachers file of :func:`train_teachers`: (weights, temperatures)."""
    with np.load(path) as f:
        return f["weights"], f["temperatures"]


def public_features(public_path, rows: np.ndarray, settings: dict) -> np.ndarray:
    """Teacher features of the public samples ``rows`` (row numbers of the public table)."""
    from ..io import read_images

    _, images, _ = read_images(public_path)
    return encoder_features(images[np.asarray(rows)], settings)


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
        "key": f"{r['scenario']}/{r['ldmech']}-eps{r['eps']}-q{r['nq']}-{r['design']}-{r['qs']}",
        "plan_key": plan_key(r),
        "design": r["design"],
    }


def plan(job: Job, *, owners: int, public_n: int, per_iteration: int, iterations: int) -> dict:
    """The server's query plan (public randomness, keyed by the run): every query slot's owners (no owner
    more than :func:`answer_cap` times), the owners' loads, and the first iteration's queries (outputs
    ``plan`` and ``queries``).  The same plan serves every mechanism, epsilon and query sampling of the
    job's (scenario, nq, design): paired runs."""
    from ..io import save_npy, write_json

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


def release(job: Job, settings: dict, *, records: int) -> None:
    """Every owner's side of one iteration: each owner answers the queries the plan assigns to it with
    its own teacher only, at epsilon / its load, sanitized with its own release-keyed randomness.  Out:
    the sanitized answers (queries x N_Q x k, box scale), ledger rows (one per group of owners with the
    same answers and per-answer epsilon: the per-owner ledger is the student's owners.csv), and every
    pool record's epsilon spent in this release (summed over the owners that hold it): outputs
    ``release``, ``guarantee`` and ``records``.  The job's wildcards name the release."""
    from ..io import load_npy, read_json, save_npy
    from ..privacy import Draw, registry, release_row, write_releases
    from ..seeding import release_key, release_rng

    release_id, seed, randomness, rule = job.release, job.seed, job.randomness, job.rule
    iteration, mechanism, scenario = int(job["iteration"]), job["ldmech"], job.scenario
    inp, out_release = job.input, job.output["release"]
    p = read_json(inp["plan"])
    info = read_json(inp["teachers_info"])
    queries = load_npy(inp["queries"])
    s = p["per_iteration"]
    slots = np.asarray(p["slots"])[(iteration - 1) * s : iteration * s]
    per_answer = owner_epsilons(p["total_epsilon"], np.asarray(p["loads"]))
    weights, temps = load_owners(inp["teachers"])
    features = public_features(inp["public"], queries, settings["encoder"])
    answers, spent = None, np.zeros(p["owners"])
    groups: dict = {}
    for owner in np.unique(slots):
        owner = int(owner)
        rows_, cols = np.nonzero(slots == owner)
        mech = registry.parse(f"{mechanism}-eps{float(per_answer[owner])!r}")
        if mech.locality != "soft-label":
            raise ValueError(f"{mechanism!r} is not a soft-label sanitizer")
        key = {**release_id, "owner": owner}
        out = Owner(owner, weights[owner], temps[owner]).answer(
            features[rows_], mech, release_rng(seed, randomness, rule, key)
        )
        if answers is None:
            answers = np.zeros((len(slots), slots.shape[1], out.shape[1]))
        answers[rows_, cols] = out
        spent[owner] = per_answer[owner] * len(rows_)
        groups.setdefault((len(rows_), float(per_answer[owner])), []).append(owner)
    rows = [
        release_row(
            METHOD,
            scenario,
            str(out_release),
            -1,
            mechanism,
            soft_label.owner_guarantee(mechanism, eps, n),
            # each owner's draw is keyed by its id; the row names the group: first owner + how many more
            drawn=Draw(randomness, release_key(rule, {**release_id, "owner": f"{group[0]}+{len(group) - 1}"})),
            n=n,
            seed=seed,
            owners=len(group),
            first_owner=group[0],
            pool_records=info["pool_records"],
        )
        for (n, eps), group in sorted(groups.items())
    ]
    sets = owner_records(job["design"], info["party_sizes"], records, seed, scenario)
    save_npy(answers, out_release)
    save_npy(holders(sets, info["pool_records"], spent), job.output["records"])
    write_releases(rows, job.output["guarantee"])


def answered(plan: dict, iterations: int) -> np.ndarray:
    """Every owner's answers in the plan's first ``iterations`` iterations."""
    slots = np.asarray(plan["slots"])[: iterations * plan["per_iteration"]]
    return loads(slots, plan["owners"])


def owner_ledger(plan: dict, iterations: int, mechanism: str):
    """One row per owner (those that never answered too): its answers in the first ``iterations``
    iterations, its per-answer epsilon, and the epsilon they compose to (sequential composition)."""
    import pandas as pd

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


def owner_guarantee_of(row: dict):
    """The guarantee of one row of :func:`owner_ledger`."""
    return soft_label.owner_guarantee(row["mechanism"], float(row["per_answer_epsilon"]), int(row["answers"]))


class ServerStudent:
    """The server's side of a run: the public and test images, a student trained from scratch on the
    queried public samples with Eq. 4, and its result row.  Shared by LDP-DL and PATE."""

    def __init__(self, job: Job, settings: dict, loss: dict):
        """The job's inputs ``public`` and ``test``, on the job's device and threads."""
        from ..data.loaders import load_labelled, load_public
        from ..train import loop

        self.t0 = time.perf_counter()
        loop.set_threads(job.threads)
        self.dev = loop.pick_device(job.device)
        self.public_path, self.settings, self.loss = job.input["public"], settings, loss
        self.x_pub, self.pub_meta = load_public(self.public_path, self.dev)
        self.x_test, self.y_test, self.meta = load_labelled(job.input["test"], self.dev)

    def fit(self, idx: np.ndarray, targets: np.ndarray, seed: int, name: str):
        """A student from scratch on (public samples ``idx``, target distributions ``targets``)."""
        import torch

        from ..train import loop
        from ..train.loop import Objective
        from ..train.models import build, optimizer
        from ..train.supervised import Monitor, TrainSettings, train_supervised

        self.idx, self.targets = np.asarray(idx), np.asarray(targets, dtype=np.float64)
        gen = loop.seed_everything(seed)
        x = self.x_pub[torch.as_tensor(self.idx, device=self.dev)]
        model = loop.prepare(build(self.settings["arch"], x.shape[1:], len(self.meta["task_classes"])), self.dev)
        train = TrainSettings.from_config(self.settings)
        y = torch.as_tensor(self.targets.astype(np.float32), device=self.dev)
        loss = kd_loss(float(self.loss["alpha"]), float(self.loss["beta"]), float(self.loss["tau"]))
        train_supervised(
            model, optimizer(model, train.lr), (x, y), train, gen, Monitor(name), objective=Objective(loss)
        )
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


def student_iteration(job: Job, settings: dict, loss: dict) -> dict:
    """The server, one AQS iteration: targets from the sanitized answers of iterations 1..t, a student
    trained from scratch on every sample queried so far, its test accuracy, and the next iteration's
    queries (the S least confident samples under this student with AQS, else S at random).  Inputs: the
    plan, and per iteration so far its queries, releases, guarantees and records; outputs: result,
    next, model, owners."""
    from ..io import load_npy, read_json, save_npy, write_csv, write_json
    from ..seeding import rng, torch_seed
    from ..train.supervised import save_model

    run, seed, inp, out = run_keys(job.release), job.seed, job.input, job.output
    iteration, aqs = int(job["iteration"]), job["qs"] == "aqs"
    p = read_json(inp["plan"])
    idx = np.concatenate([load_npy(q) for q in inp["queries"]])
    targets = np.concatenate([server_targets(load_npy(r)) for r in inp["releases"]])
    server = ServerStudent(job, settings, loss)
    server.fit(
        idx, targets, torch_seed(seed, "ldpdl-student", run["key"], iteration), f"student, iteration {iteration}"
    )
    available = np.setdiff1d(np.arange(len(server.x_pub)), idx)
    s = min(p["per_iteration"], len(available))
    if aqs:
        nxt = least_confident(server.probabilities(), available, s)
    else:
        nxt = random_queries(available, s, rng(seed, "ldpdl-queries", run["plan_key"], iteration + 1))
    save_npy(nxt, out["next"])
    from ..privacy import read_releases

    ledger = owner_ledger(p, iteration, run["mechanism"])
    write_csv(ledger, out["owners"])
    guarantee = owner_guarantee_of(ledger.loc[ledger["epsilon"].idxmax()].to_dict())
    pool = int(read_releases(inp["guarantees"][0])[0]["pool_records"])
    per_record = np.sum([load_npy(r) for r in inp["records"]], axis=0)
    row = server.row(
        guarantee,
        method=METHOD,
        scenario=run["scenario"],
        mechanism=run["mechanism"],
        n=pool,
        seed=seed,
        preset=job.preset,
        parties=p["owners"],
        owners=p["owners"],
        per_query=p["per_query"],
        aqs=bool(aqs),
        iteration=iteration,
        iterations=p["iterations"],
        total_epsilon=p["total_epsilon"],
        per_answer_epsilon=p["per_answer_epsilon"],
        max_answers=int(ledger["answers"].max()),
        answer_cap=p["cap"],
        owner_design=run["design"],
        epsilon_owner=guarantee.epsilon,
        epsilon_teacher_data=guarantee.epsilon,  # one teacher per owner, fitted on its records only
        epsilon_record=float(per_record.max()),
        mean_answers_paper=p["per_iteration"] * p["iterations"] * p["per_query"] / p["owners"],
        randomness=job.randomness,
    )
    write_json(row, out["result"])
    save_model(server.model, out["model"], scenario=run["scenario"], mechanism=run["mechanism"], iteration=iteration)
    return row


def pate_curate(job: Job, settings: dict, *, delta: float, queries: int) -> None:
    """PATE's trusted curator: every teacher (each fitted on its own disjoint shard) votes on ``queries``
    public samples drawn at random (public randomness); GNMax with sigma calibrated to (epsilon, delta)
    by the data-independent RDP bound releases the noisy argmax (outputs ``labels`` and ``guarantee``)."""
    from ..io import read_json, read_rows, write_json
    from ..privacy import Draw, pate, release_row, write_releases
    from ..seeding import release_key, release_rng

    release_id, scenario, epsilon, seed = job.release, job.scenario, float(job["eps"]), job.seed
    randomness, rule, public_path, out_labels = job.randomness, job.rule, job.input["public"], job.output["labels"]
    weights, temps = load_owners(job.input["teachers"])
    k = weights.shape[2]
    idx = random_queries(np.arange(read_rows(public_path)), queries, rng(seed, "pate-queries", scenario, queries))
    features = public_features(public_path, idx, settings["encoder"])
    votes = np.stack([Owner(t, weights[t], temps[t]).votes(features) for t in range(len(weights))])
    records = int(read_json(job.input["teachers_info"])["pool_records"])
    sigma = pate.gnmax_sigma(epsilon, delta, queries)
    labels = pate.gnmax(vote_counts(votes, k), sigma, release_rng(seed, randomness, rule, release_id))
    write_json(
        {"queries": idx.tolist(), "labels": labels.tolist(), "classes": k, "sigma": sigma, "teachers": len(weights)},
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
                drawn=Draw(randomness, release_key(rule, release_id)),
                n=records,
                k=k,
                sigma=sigma,
                seed=seed,
                queries=queries,
            )
        ],
        job.output["guarantee"],
    )


def pate_student(job: Job, settings: dict, loss: dict) -> dict:
    """The server: a student on PATE's noisy labels (one-hot targets: Eq. 4's two terms are then the
    cross-entropy with the noisy label at temperatures 1 and tau).  Inputs: labels, guarantee, public,
    test; outputs: result, model."""
    from ..io import read_json, write_json
    from ..privacy import Guarantee, read_releases
    from ..seeding import torch_seed
    from ..train.supervised import save_model

    scenario, seed = job.scenario, job.seed
    lab = read_json(job.input["labels"])
    server = ServerStudent(job, settings, loss)
    server.fit(
        np.asarray(lab["queries"]),
        np.eye(lab["classes"])[np.asarray(lab["labels"])],
        torch_seed(seed, "pate-student", scenario),
        "PATE student",
    )
    (g,) = read_releases(job.input["guarantee"])
    row = server.row(
        Guarantee.from_row(g),
        method=PATE,
        scenario=scenario,
        mechanism="gnmax",
        n=int(g["n"]),
        seed=seed,
        preset=job.preset,
        parties=lab["teachers"],
        owners=lab["teachers"],
        owner_design=job["design"],
        epsilon_record=float(g["epsilon"]),  # every record is in one teacher's shard
        sigma=lab["sigma"],
        randomness=job.randomness,
    )
    write_json(row, job.output["result"])
    save_model(server.model, job.output["model"], scenario=scenario, mechanism="gnmax")
    return row
