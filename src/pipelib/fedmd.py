"""FedMD with NFDP (paper 002, Algorithm 1), its baselines, and the privacy boundary in code.

* A :class:`Party` holds its model, its optimizer and its *own* training records (its NFDP sample,
  or all its records for FedMD-NP / FedMD-LDP).  It sees public images and the server's
  aggregate; it releases answers (logits, softmax or one-hot argmax) on the round's public subset,
  with Gaussian noise when it runs FedMD-LDP.
* The :class:`Server` draws the public subset of each round and averages the answers it receives;
  it holds no private record and no model.

Algorithm 1: each party trains T1 epochs on its records (initialization); the server draws a public
subset and aggregates the parties' answers on it; then for R rounds every party digests the
aggregate for T2 epochs, revisits its records for T3 epochs and answers the next subset.  The last
round's answers would feed nothing, so they are not released (and not counted by the accountant).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from . import train
from .seeding import rng

log = logging.getLogger(__name__)

ANSWERS = ("logits", "softmax", "argmax")
DIGEST_LOSS = {"logits": train.l1, "softmax": train.soft_ce, "argmax": train.soft_ce}


@dataclass
class Schedule:
    """Algorithm 1's knobs."""

    rounds: int  # R
    public_per_round: int  # |X_p| per round
    init_epochs: int  # T1
    digest_epochs: int  # T2
    revisit_epochs: int  # T3
    init_batch: int
    digest_batch: int
    revisit_batch: int
    predict_batch: int = 1024

    @classmethod
    def from_config(cls, cfg: dict) -> "Schedule":
        return cls(**{k: cfg[k] for k in cls.__dataclass_fields__ if k in cfg})


class Party:
    """One party: its model and optimizer, and its own records (x, y) only."""

    def __init__(self, pid: int, model, opt, x: torch.Tensor, y: torch.Tensor, answer: str, gen: torch.Generator,
                 noise_sigma: float = 0.0, noise_gen: torch.Generator | None = None):
        if answer not in ANSWERS:
            raise ValueError(f"unknown answer type {answer!r}; allowed: {', '.join(ANSWERS)}")
        if noise_sigma > 0 and answer == "logits":
            raise ValueError("Gaussian answers need bounded answers: use softmax or argmax, not logits")
        self.pid, self.model, self.opt, self.x, self.y = pid, model, opt, x, y
        self.answer_type, self.gen = answer, gen
        self.noise_sigma, self.noise_gen = noise_sigma, noise_gen

    def train_own(self, epochs: int, batch: int) -> dict:
        """Train on the party's own records (initialization and revisit)."""
        return train.fit(self.model, self.opt, self.x, self.y, train.hard_ce, epochs, batch, self.gen)

    def digest(self, x_public: torch.Tensor, consensus: torch.Tensor, epochs: int, batch: int) -> dict:
        """Move towards the server's aggregate on the public subset."""
        return train.fit(self.model, self.opt, x_public, consensus, DIGEST_LOSS[self.answer_type], epochs, batch,
                         self.gen)

    def answer(self, x_public: torch.Tensor, batch: int) -> torch.Tensor:
        """The released answers on a public subset (noised for FedMD-LDP)."""
        logits = train.predict(self.model, x_public, batch)
        if self.answer_type == "logits":
            out = logits
        elif self.answer_type == "softmax":
            out = F.softmax(logits, dim=1)
        else:
            out = F.one_hot(logits.argmax(1), logits.shape[1]).float()
        if self.noise_sigma > 0:
            noise = torch.randn(out.shape, generator=self.noise_gen).to(out.device)
            out = out + self.noise_sigma * noise
        return out

    def accuracy(self, x_test: torch.Tensor, y_test: torch.Tensor, batch: int, outputs=None) -> float:
        return train.accuracy(self.model, x_test, y_test, batch, outputs)


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


def run(parties: list[Party], server: Server, x_public: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor,
        schedule: Schedule, task_outputs: tuple[int, int], checkpoint: Path | None = None, fingerprint: str = "",
        on_round=None) -> list[dict]:
    """Algorithm 1.  Returns one row per (round, party): round 0 is after initialization.

    ``accuracy`` is the test accuracy on the private task (argmax over ``task_outputs``);
    ``accuracy_any_class`` is FedMD's figure (argmax over all outputs).

    With ``checkpoint`` set, the state after every round is saved there, and a run that finds a
    checkpoint with the same ``fingerprint`` resumes from it with identical results.
    """
    s = schedule
    state = _load(checkpoint, fingerprint, parties)
    if state is None:
        t0 = time.perf_counter()
        for p in parties:
            p.train_own(s.init_epochs, s.init_batch)
        history = _evaluate(parties, x_test, y_test, 0, s, task_outputs)
        consensus = _collect(parties, server, x_public, 0, s) if s.rounds > 0 else None
        _stamp(history, time.perf_counter() - t0)
        start = 0
        _save(checkpoint, fingerprint, parties, history, consensus, 0)
        if on_round:
            on_round(history[-len(parties):])
    else:
        history, consensus, start = state
        log.info("resumed from %s after round %d", checkpoint, start)
    for t in range(start, s.rounds):
        t0 = time.perf_counter()
        x_round = x_public[torch.from_numpy(server.draw(t)).to(x_public.device)]
        for p in parties:
            p.digest(x_round, consensus, s.digest_epochs, s.digest_batch)
            p.train_own(s.revisit_epochs, s.revisit_batch)
        history += _evaluate(parties, x_test, y_test, t + 1, s, task_outputs)
        consensus = _collect(parties, server, x_public, t + 1, s) if t + 1 < s.rounds else None
        _stamp(history, time.perf_counter() - t0)
        _save(checkpoint, fingerprint, parties, history, consensus, t + 1)
        if on_round:
            on_round(history[-len(parties):])
    return history


def _collect(parties, server, x_public, t, s):
    """Round t's public subset, every party's released answers on it, and their aggregate."""
    x_round = x_public[torch.from_numpy(server.draw(t)).to(x_public.device)]
    return server.aggregate([p.answer(x_round, s.predict_batch) for p in parties])


def _evaluate(parties, x_test, y_test, t, s, task_outputs):
    return [{"round": t, "party": p.pid, "arch": p.model.arch.name,
             "accuracy": p.accuracy(x_test, y_test, s.predict_batch, task_outputs),
             "accuracy_any_class": p.accuracy(x_test, y_test, s.predict_batch),
             "round_seconds": None} for p in parties]


def _stamp(history, seconds):
    """Set the wall time of the round just finished (training, evaluation, answers) on its rows."""
    for row in history:
        if row["round_seconds"] is None:
            row["round_seconds"] = seconds


def wall_seconds(history: list[dict]) -> float:
    """A run's compute time: its rounds' wall times summed, so that it survives a resume."""
    return float(sum({h["round"]: h["round_seconds"] for h in history}.values()))


def releases(schedule: Schedule) -> int:
    """Answer vectors one party releases over a run: R rounds of |X_p| queries (the last round's
    answers are never sent)."""
    return schedule.rounds * schedule.public_per_round


def _save(path, fingerprint, parties, history, consensus, t):
    train.save_checkpoint(path, fingerprint, round=t, history=history,
                          consensus=None if consensus is None else consensus.cpu(),
                          parties=[{"model": p.model.state_dict(), "opt": p.opt.state_dict(), "gen": p.gen.get_state(),
                                    "noise_gen": p.noise_gen.get_state() if p.noise_gen is not None else None}
                                   for p in parties])


def _load(path, fingerprint, parties):
    state = train.load_checkpoint(path, fingerprint)
    if state is None:
        return None
    for p, saved in zip(parties, state["parties"]):
        p.model.load_state_dict(saved["model"])
        p.opt.load_state_dict(saved["opt"])
        p.gen.set_state(saved["gen"])
        if p.noise_gen is not None:
            p.noise_gen.set_state(saved["noise_gen"])
    device = parties[0].x.device
    consensus = state["consensus"].to(device) if state["consensus"] is not None else None
    return state["history"], consensus, state["round"]


def summarize(history: list[dict], n_parties: int) -> dict:
    """Final accuracy: mean and standard deviation over parties after the last round."""
    last = max(h["round"] for h in history)
    final = [h for h in history if h["round"] == last]
    assert len(final) == n_parties
    acc = np.array([h["accuracy"] for h in final])
    return {"accuracy": float(acc.mean()), "accuracy_std": float(acc.std(ddof=0)),
            "accuracy_min": float(acc.min()), "accuracy_max": float(acc.max()),
            "accuracy_any_class": float(np.mean([h["accuracy_any_class"] for h in final])), "rounds": int(last)}


def noise_for(schedule: Schedule, epsilon: float, delta: float) -> float:
    """sigma that makes all of a party's released answers (epsilon, delta)-DP."""
    from .privacy import gaussian_sigma

    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"FedMD-LDP needs a finite target epsilon > 0, got {epsilon}")
    return gaussian_sigma(epsilon, delta, releases(schedule))
