"""FedMD with NFDP (paper 002, Algorithm 1), its baselines, and the privacy boundary in code.

* A :class:`Party` holds its model, its optimizer and its *own* training records (its NFDP sample,
  or all its records for FedMD-NP / FedMD-LDP).  It sees public images and the server's
  aggregate; it releases answers (logits, softmax or one-hot argmax) on the round's public subset,
  with Gaussian noise when it runs FedMD-LDP.
* The :class:`Server` draws the public subset of each round and averages the answers it receives;
  it holds no private record and no model.

One job runs all parties and the server in one process (:class:`FedMD`, a protocol of the shared
round runner); the boundary is kept in code: a party's methods touch only its own records, the
server's only the answers.

Algorithm 1: each party trains T1 epochs on its records (initialization); the server draws a public
subset and aggregates the parties' answers on it; then for R rounds every party digests the
aggregate for T2 epochs, revisits its records for T3 epochs and answers the next subset.  The last
round's answers would feed nothing, so they are not released (and not counted by the accountant).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import torch
import torch.nn.functional as F

from ..data.loaders import load_labelled, load_public
from ..io import atomic_path, read_csv, read_rows, write_json, write_table
from ..job import Job
from ..privacy import NO_PRIVACY, Draw, Guarantee, delta_vacuous, gaussian, release_row, write_releases
from ..privacy.gaussian import gaussian_sigma
from ..runs import FedmdRun
from ..schema import result_row
from ..seeding import release_key, release_torch_seed, rng, torch_seed
from ..settings import FedmdSettings, Schedule
from ..train import loop
from ..train.checkpoint import clear_checkpoint, fingerprint
from ..train.models import optimizer
from ..train.supervised import load_model
from ..vocab import ANSWERS
from .rounds import run_rounds, wall_seconds

log = logging.getLogger(__name__)

DIGEST_LOSS = {"logits": loop.l1, "softmax": loop.soft_ce, "argmax": loop.soft_ce}


def bounded_answers(out: torch.Tensor) -> torch.Tensor:
    """FedMD-LDP's input to the Gaussian: a row with a NaN (a party whose model diverged) becomes the uniform
    answer, inside the probability vectors whose L2 sensitivity sets sigma; a NaN would pass through the noise
    unprotected."""
    broken = torch.isnan(out).any(dim=1, keepdim=True)
    if not bool(broken.any()):
        return out
    log.warning("%d answers were NaN (a diverged model): released as the uniform answer", int(broken.sum()))
    return torch.where(broken, torch.full_like(out, 1.0 / out.shape[1]), out)


class Party:
    """One party: its model and optimizers, and its own records (x, y) only."""

    def __init__(
        self,
        pid: int,
        model,
        opts,
        records: tuple[torch.Tensor, torch.Tensor],
        answer: str,
        gen: torch.Generator,
        noise: tuple[float, torch.Generator | None] = (0.0, None),
        outputs: tuple[int, int] | None = None,
    ):
        """``opts``: one optimizer for every phase, or (own records', digest's); ``records``: the party's own
        (x, y); ``noise``: FedMD-LDP's Gaussian (sigma, generator) added to every released answer (sigma 0:
        clean answers); ``outputs``: the (start, stop) outputs answered and digested (None: all)."""
        (x, y), (noise_sigma, noise_gen) = records, noise
        if answer not in ANSWERS:
            raise ValueError(f"unknown answer type {answer!r}; allowed: {', '.join(ANSWERS)}")
        if noise_sigma > 0 and answer == "logits":
            raise ValueError("Gaussian answers need bounded answers: use softmax or argmax, not logits")
        self.opt, self.digest_opt = opts if isinstance(opts, tuple) else (opts, opts)
        self.pid, self.model, self.x, self.y = pid, model, x, y
        self.answer_type, self.gen, self.outputs = answer, gen, outputs
        self.noise_sigma, self.noise_gen = noise_sigma, noise_gen
        loss = DIGEST_LOSS[answer]
        self.digest_objective = loop.Objective(loss if outputs is None else _on_outputs(loss, *outputs))

    def train_own(self, epochs: int, batch: int) -> dict:
        """Train on the party's own records (initialization and revisit)."""
        return loop.fit(self.model, self.opt, (self.x, self.y), loop.CROSS_ENTROPY, epochs, batch, self.gen, graph=True)

    def digest(self, x_public: torch.Tensor, consensus: torch.Tensor, epochs: int, batch: int) -> dict:
        """Move towards the server's aggregate on the public subset."""
        data = (x_public, consensus)
        return loop.fit(self.model, self.digest_opt, data, self.digest_objective, epochs, batch, self.gen, graph=True)

    def answer(self, x_public: torch.Tensor, batch: int) -> torch.Tensor:
        """The released answers on a public subset (noised for FedMD-LDP)."""
        logits = loop.predict(self.model, x_public, batch)
        if self.outputs is not None:
            logits = logits[:, self.outputs[0] : self.outputs[1]]
        if self.answer_type == "logits":
            out = logits
        elif self.answer_type == "softmax":
            out = F.softmax(logits, dim=1)
        else:
            out = F.one_hot(logits.argmax(1), logits.shape[1]).float()
        if self.noise_sigma > 0:
            out = bounded_answers(out)
            noise = torch.randn(out.shape, generator=self.noise_gen).to(out.device)
            out = out + self.noise_sigma * noise
        return out

    def accuracies(self, x_test: torch.Tensor, y_test: torch.Tensor, batch: int, outputs) -> dict:
        """Test accuracy over the task's ``outputs`` and over all outputs, from one forward pass."""
        logits = loop.predict(self.model, x_test, batch)
        return {"accuracy": loop.top1(logits, y_test, outputs), "accuracy_any_class": loop.top1(logits, y_test)}

    def state(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "opt": loop.portable_state(self.opt),
            "digest_opt": None if self.digest_opt is self.opt else loop.portable_state(self.digest_opt),
            "gen": self.gen.get_state(),
            "noise_gen": self.noise_gen.get_state() if self.noise_gen is not None else None,
        }

    def restore(self, saved: dict) -> None:
        self.model.load_state_dict(saved["model"])
        self.opt.load_state_dict(saved["opt"])
        if self.digest_opt is not self.opt:
            self.digest_opt.load_state_dict(saved["digest_opt"])
        self.gen.set_state(saved["gen"])
        if self.noise_gen is not None:
            self.noise_gen.set_state(saved["noise_gen"])


def _on_outputs(loss, start: int, stop: int):
    """``loss`` on the outputs start..stop of the logits only."""

    def sliced(logits, target):
        return loss(logits[:, start:stop], target)

    return sliced


def set_bn_momentum(model, momentum: float) -> None:
    """Set every BatchNorm layer's running-statistics momentum (PyTorch's 0.1 weighs the newest batch 0.1;
    Keras' momentum 0.99 is PyTorch's 0.01)."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = momentum


def project_simplex(v: torch.Tensor) -> torch.Tensor:
    """Euclidean projection of each row onto the probability simplex (Duchi et al. 2008)."""
    u, _ = torch.sort(v, dim=1, descending=True)
    css = u.cumsum(1) - 1
    ks = torch.arange(1, v.shape[1] + 1, device=v.device, dtype=v.dtype)
    rho = ((u - css / ks) > 0).sum(1, keepdim=True)
    theta = css.gather(1, rho - 1) / rho.to(v.dtype)
    return (v - theta).clamp_min(0)


class Server:
    """Draws each round's public subset and averages the answers; sees nothing else."""

    def __init__(self, n_public: int, per_round: int, answer: str, seed: int):
        if per_round > n_public:
            raise ValueError(f"public_per_round={per_round} exceeds the public pool of {n_public} images")
        self.n_public, self.per_round, self.answer_type, self.seed = n_public, per_round, answer, seed

    def draw(self, t: int) -> np.ndarray:
        """Indices of round t's public subset (without replacement)."""
        return np.sort(rng(self.seed, "public-subset", t).choice(self.n_public, self.per_round, replace=False))

    def aggregate(self, answers: list[torch.Tensor]) -> torch.Tensor:
        """The average of the answers (paper 002's f_Aggreg).  Probability answers are projected back
        onto the simplex, a no-op for clean answers and a post-processing of noisy (LDP) ones."""
        mean = torch.stack(answers).mean(0)
        return mean if self.answer_type == "logits" else project_simplex(mean)


class FedMD:
    """Algorithm 1 as a round protocol: round 0 initializes every party and collects the first
    consensus; round t digests it, revisits, and collects the next one (none after the last round)."""

    def __init__(
        self,
        parties: list[Party],
        server: Server,
        x_public: torch.Tensor,
        x_test: torch.Tensor,
        y_test: torch.Tensor,
        schedule: Schedule,
        task_outputs: tuple[int, int],
    ):
        self.parties, self.server, self.x_public = parties, server, x_public
        self.x_test, self.y_test, self.s, self.task_outputs = x_test, y_test, schedule, task_outputs
        self.rounds = schedule.rounds
        self.consensus: torch.Tensor | None = None

    def _subset(self, t: int) -> torch.Tensor:
        return self.x_public[torch.from_numpy(self.server.draw(t)).to(self.x_public.device)]

    def play(self, t: int) -> None:
        s = self.s
        if t == 0:
            for p in self.parties:
                p.train_own(s.init_epochs, s.init_batch)
        else:
            x_round = self._subset(t - 1)
            for p in self.parties:
                p.digest(x_round, self.consensus, s.digest_epochs, s.digest_batch)
                p.train_own(s.revisit_epochs, s.revisit_batch)
        if t < self.rounds:  # round t's answers on subset t feed round t + 1
            x_next = self._subset(t)
            self.consensus = self.server.aggregate([p.answer(x_next, s.predict_batch) for p in self.parties])
        else:
            self.consensus = None

    def evaluate(self, t: int) -> list[dict]:
        """Each party's test accuracy on the private task (argmax over ``task_outputs``) and FedMD's
        figure (argmax over all outputs)."""
        b = self.s.predict_batch
        return [
            {
                "round": t,
                "party": p.pid,
                "arch": p.model.arch.name,
                **p.accuracies(self.x_test, self.y_test, b, self.task_outputs),
            }
            for p in self.parties
        ]

    def state(self) -> dict:
        return {
            "parties": [p.state() for p in self.parties],
            "consensus": None if self.consensus is None else self.consensus.cpu(),
        }

    def restore(self, state: dict) -> None:
        for p, saved in zip(self.parties, state["parties"]):
            p.restore(saved)
        c = state["consensus"]
        self.consensus = None if c is None else c.to(self.x_public.device)

    def describe(self, rows: list[dict]) -> str:
        accs = [r["accuracy"] for r in rows]
        return f"mean accuracy {float(np.mean(accs)):.4f}, parties {' '.join(f'{a:.3f}' for a in accs)}"


def summarize(history: list[dict], n_parties: int) -> dict:
    """Final accuracy: mean and standard deviation over parties after the last round."""
    last = max(h["round"] for h in history)
    final = [h for h in history if h["round"] == last]
    assert len(final) == n_parties
    acc = np.array([h["accuracy"] for h in final])
    return {
        "accuracy": float(acc.mean()),
        "accuracy_std": float(acc.std(ddof=0)),
        "accuracy_min": float(acc.min()),
        "accuracy_max": float(acc.max()),
        "accuracy_any_class": float(np.mean([h["accuracy_any_class"] for h in final])),
        "rounds": int(last),
    }


def noise_for(schedule: Schedule, epsilon: float, delta: float) -> float:
    """sigma that makes all of a party's released answers (epsilon, delta)-DP."""

    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"FedMD-LDP needs a finite target epsilon > 0, got {epsilon}")
    return gaussian_sigma(epsilon, delta, schedule.releases)


# ------------------------------------------------------------------------------------ stage entry


def worst_party(ledger_path) -> dict:
    """The NFDP ledger row of the party with the weakest guarantee (the smallest n): the row's claim."""

    ledger = read_csv(ledger_path)
    return ledger.sort_values(["epsilon", "delta"], ascending=False, kind="stable").iloc[0].to_dict()


def run_row(job: Job, settings: FedmdSettings, *, models: dict, n_public_classes: int) -> dict:
    """One FedMD row (``np``, ``nfdp-...`` or ``ldp-...``): run Algorithm 1 and write its result row, the
    per-round accuracies, the parties' final models and (FedMD-LDP) the guarantees of their answers.

    The job's wildcards (scenario, answer, run) name the release; FedMD-LDP's noise of party i is keyed
    by all of them and i.  Input ``parties[i]`` is the only private data party i ever sees: its NFDP
    sample (nfdp) or all its records (np, ldp).  ``models`` maps architecture -> pre-trained model file.
    The outputs: result, rounds, models, releases.

    A FedMD-LDP party trains on all its records; only its answers are privatized.  Its model, and so the
    test accuracies this row reports, are not covered by the guarantee: they are evaluation-only
    (``evaluation_only`` in the result and rounds tables).
    """

    release, seed, randomness, checkpoint, out = job.release, job.seed, job.randomness, job.checkpoint, job.output
    # the answer type: the path's (Table 2-5 rows) or the settings' (the loop ablation's variants)
    scenario, answer, method = release["scenario"], release.get("answer", settings.answer), release["run"]
    party_paths, ledger_path = job.input["parties"], job.input.get("ledger")
    fedmd_run = FedmdRun.parse(method)
    kind = fedmd_run.kind
    dev = loop.start(job.threads, settings.device, job.precision)
    schedule = settings.schedule
    x_pub, pub_meta = load_public(job.input["public"], dev)
    x_test, y_test, test_meta = load_labelled(job.input["test"], dev, offset=n_public_classes)
    n_classes = n_public_classes + len(test_meta["task_classes"])
    archs = settings.party_archs(len(party_paths))
    ns = [read_rows(p) for p in party_paths]  # records each party trains on

    extra = {
        "k": min(ns),
        "n": min(ns),
        "sampling": None,
        "sigma": None,
        "sigma_rdp": None,
        "epsilon_rdp": None,
        "epsilon_log10_paper_convention": None,
        "target_epsilon": None,
        "matched_k": None,
        "randomness": None,
        "evaluation_only": kind == "ldp",
    }
    guarantee, sigma, vacuous = NO_PRIVACY, 0.0, True
    if kind == "nfdp":  # the parties' samples are the releases; the row carries the worst party's record
        worst = worst_party(ledger_path)
        guarantee, vacuous = Guarantee.from_row(worst), bool(worst["delta_vacuous"])
        extra.update(
            k=int(worst["k"]),
            n=int(worst["n"]),
            sampling=worst["sampling"],
            epsilon_log10_paper_convention=float(worst["epsilon_log10_paper_convention"]),
            randomness=worst["randomness"],
        )
    elif kind == "ldp":  # calibrated exactly to the (epsilon, delta) of the matching NFDP row
        target = worst_party(ledger_path)
        count, t_eps, t_delta = schedule.releases, float(target["epsilon"]), float(target["delta"])
        sigma = noise_for(schedule, t_eps, t_delta)
        guarantee = gaussian.guarantee(sigma, count, t_delta)
        vacuous = delta_vacuous(guarantee.delta, min(ns))
        extra.update(
            sigma=sigma,
            sigma_rdp=gaussian.rdp_sigma(t_eps, t_delta, count),  # cross-check: what RDP would calibrate
            epsilon_rdp=gaussian.rdp_epsilon(sigma, count, t_delta),  # cross-check: RDP's bound at sigma
            target_epsilon=t_eps,
            matched_k=int(target["k"]),
            randomness=randomness,
        )

    train_seed = torch_seed(seed, "fedmd", scenario, method, answer)
    loop.seed_everything(train_seed)
    parties = []
    for i, (path, arch) in enumerate(zip(party_paths, archs)):
        x, y, _ = load_labelled(path, dev, offset=n_public_classes)
        model = load_model(models[arch], dev, n_classes)
        gen = torch.Generator().manual_seed(torch_seed(seed, "party-shuffle", scenario, method, i))
        noise_gen = None
        if kind == "ldp":  # party i's noise is keyed by every wildcard of the job, and i
            noise_seed = release_torch_seed(seed, randomness, "fedmd", {**job.release_id, "party": i})
            noise_gen = torch.Generator().manual_seed(noise_seed)
        set_bn_momentum(model, schedule.bn_momentum)
        opts = optimizer(model, settings.lr)
        if schedule.optimizers == "per_phase":
            opts = (opts, optimizer(model, settings.lr))
        outputs = (n_public_classes, n_classes) if schedule.answer_outputs == "task" else None
        parties.append(Party(i, model, opts, (x, y), answer, gen, (sigma, noise_gen), outputs))
    server = Server(len(x_pub), schedule.public_per_round, answer, seed=torch_seed(seed, "server", scenario))
    log.info(
        "%s %s (%s answers): %d parties %s, %d private records each (min), %d public, %d test, device %s",
        scenario,
        method,
        answer,
        len(parties),
        archs,
        min(ns),
        len(x_pub),
        len(x_test),
        dev,
    )

    fp = fingerprint(job.code, scenario, method, answer, settings, seed, [str(p) for p in party_paths], train_seed)
    s = schedule  # every party's training image-passes: initialization, then digest and revisit per round
    planned = sum(
        s.init_epochs * n + s.rounds * (s.digest_epochs * s.public_per_round + s.revisit_epochs * n) for n in ns
    )
    protocol = FedMD(parties, server, x_pub, x_test, y_test, schedule, (n_public_classes, n_classes))
    with loop.progress(planned, f"FedMD {method}"):
        history = run_rounds(protocol, checkpoint, fp)
    rounds = pd.DataFrame(history).assign(
        scenario=scenario, method=method, answer=answer, evaluation_only=kind == "ldp"
    )
    write_table(pa.Table.from_pandas(rounds, preserve_index=False), out["rounds"])
    _save_parties(parties, archs, out["models"])
    write_releases(
        [
            release_row(
                "FedMD-LDP",
                scenario,
                f"{out['result'].rsplit('/', 1)[0]}#party-{p.pid}",
                p.pid,
                "gaussian",
                guarantee,
                drawn=Draw(randomness, release_key("fedmd", {**job.release_id, "party": p.pid})),
                n=n,
                sigma=sigma,
                seed=seed,
            )
            for p, n in zip(parties, ns)
        ]
        if kind == "ldp"
        else [],
        out["releases"],
    )
    row = result_row(
        guarantee,
        method=fedmd_run.method,
        scenario=scenario,
        public_dataset=pub_meta["dataset"],
        private_dataset=test_meta["dataset"],
        mechanism={"np": "none", "nfdp": f"nfdp-{extra['sampling']}", "ldp": "gaussian"}[kind],
        delta_vacuous=vacuous,
        **summarize(history, len(parties)),
        **extra,
        parties=len(parties),
        test_n=len(x_test),
        answer=answer,
        archs=archs,
        releases_per_party=schedule.releases,
        public_per_round=schedule.public_per_round,
        wall_seconds=wall_seconds(history),
        **loop.where(dev),
        seed=seed,
        preset=job.preset,
        run=method,
    )
    write_json(row, out["result"])
    clear_checkpoint(checkpoint)
    log.info("final accuracy %.4f +- %.4f in %.0f s", row["accuracy"], row["accuracy_std"], row["wall_seconds"])
    if dev.type == "cuda":  # what a GPU slot must hold (docs/running.md): models, data, the captured steps
        log.info("peak GPU memory: %.2f GiB reserved", torch.cuda.max_memory_reserved(dev) / 2**30)
    return row


def _save_parties(parties: list[Party], archs: list[str], path) -> None:
    """The parties' final models, one file: {arch, in_shape, n_classes, state_dict} per party."""

    state = [
        {
            "party": p.pid,
            "arch": a,
            "in_shape": p.model.in_shape,
            "n_classes": p.model.n_classes,
            "state_dict": {k: v.cpu() for k, v in p.model.state_dict().items()},
        }
        for p, a in zip(parties, archs)
    ]
    with atomic_path(path) as tmp:
        torch.save(state, tmp)
