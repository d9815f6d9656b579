"""LDP-FL (paper 001): federated averaging in which every client perturbs each weight it uploads (Eq. 2)
and a shuffler hides which client sent which value; a protocol of the shared round runner.

* A :class:`~pipelib.train.local_sgd.Client` holds its own shard (x, y) only.
* :class:`~pipelib.train.local_sgd.LocalSGD` trains a group of clients from the round's global weights:
  E epochs of plain minibatch SGD each, vmapped over the group or one after another.
* Each client perturbs its trained weights with the round's ranges and its own release-keyed generator
  and hands the coins to the shuffler (:class:`pipelib.privacy.twopoint.ShuffledReports`), which keeps
  per position only the multiset of values; noise-free federated averaging sums the weights instead.
* A ``clip-c<c>-r<r>`` run is noise-free averaging of uploads clipped to the fixed box: the reference that
  tells what a fixed-range row loses to the box and what to the coins (issue 51).
* The :class:`Server` selects the round's clients, averages what the shuffler gives it, and (adaptive
  ranges) sets each layer's range for the next round from the averaged weights:
  c = (max + min) / 2, r = (max - min) / 2 of the layer (paper 001 does not give its rule).
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from ..data.loaders import load_labelled
from ..data.partition import every_party
from ..io import write_json, write_table
from ..job import Job
from ..privacy import NO_PRIVACY, Draw, registry, release_row, twopoint, write_releases
from ..runs import LdpflRun
from ..schema import result_row
from ..seeding import release_key, release_torch_seed, rng, torch_seed
from ..settings import LdpflSettings
from ..train import loop
from ..train.checkpoint import clear_checkpoint, fingerprint
from ..train.local_sgd import Client, LocalSGD, shuffles
from ..train.models import build, training_flops
from ..train.supervised import save_model
from .rounds import run_rounds, wall_seconds

log = logging.getLogger(__name__)
MIN_RADIUS = 1e-6  # an adaptive range never collapses to a point (a layer whose weights are all equal)


# ldpfl.mode auto: on a CPU, vmap only for models below this many training MFLOP per image (measured:
# docs/benchmarks.md, LDP-FL's clients); on a GPU always vmap
VMAP_CPU_MAX_MFLOP = 30.0


def client_mode(setting: str, model: torch.nn.Module, in_shape) -> str:
    """The client training ``ldpfl.mode`` asks for; ``auto``: ``vmap`` on a GPU, and on a CPU for a model of
    fewer than :data:`VMAP_CPU_MAX_MFLOP` training MFLOP per image, else ``loop`` (both give the same weights
    up to float rounding; the choice depends only on the model and the device, so a run repeats exactly)."""
    if setting != "auto":
        return setting
    if next(model.parameters()).device.type == "cuda":
        return "vmap"
    return "vmap" if training_flops(model, in_shape) < VMAP_CPU_MAX_MFLOP * 1e6 else "loop"


class SummedReports:
    """Noise-free federated averaging: the server receives the clients' weights and averages them."""

    def __init__(self, shapes: dict[str, torch.Size], device=None):
        self.sum = {k: torch.zeros(s, device=device) for k, s in shapes.items()}
        self.count = 0

    def add(self, params: dict[str, torch.Tensor]) -> None:
        for k, v in params.items():
            self.sum[k] += v
        self.count += 1

    def mean(self) -> dict[str, torch.Tensor]:
        return {k: v / self.count for k, v in self.sum.items()}


def layer_ranges(params: dict[str, torch.Tensor]) -> tuple[dict, dict]:
    """Adaptive ranges: per layer (parameter tensor) c = (max + min) / 2, r = (max - min) / 2."""
    c = {k: float(v.max() + v.min()) / 2 for k, v in params.items()}
    r = {k: max(float(v.max() - v.min()) / 2, MIN_RADIUS) for k, v in params.items()}
    return c, r


def torch_default_init(model: torch.nn.Module) -> None:
    """PyTorch's default initial weights and biases for every convolution and linear layer (uniform in
    +-1 / sqrt(fan-in), Kaiming-uniform with a = sqrt(5)), drawn from the seeded global generator:
    ``ldpfl.init: torch``, under which more of a small CNN's weights sit inside a narrow fixed box."""
    for m in model.modules():
        if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
            m.reset_parameters()


def initial_model(settings: LdpflSettings, in_shape: tuple, n_classes: int) -> torch.nn.Module:
    """The global model before round 1: ``settings.arch`` under ``settings.init`` (``he``: the models' own
    He initialization; ``torch``: :func:`torch_default_init`), drawn from the seeded global generator."""
    model = build(settings.arch, in_shape, n_classes)
    if settings.init == "torch":
        torch_default_init(model)
    return model


def share_in_box(params: dict[str, torch.Tensor], c: float, r: float) -> float:
    """The share of all values of ``params`` inside [c - r, c + r]: what a fixed box leaves unclipped."""
    inside = sum(int(((v - c).abs() <= r).sum()) for v in params.values())
    return inside / sum(v.numel() for v in params.values())


ADAPTIVE_RULES = ("noisy", "projected")


def ranges_for(params: dict[str, torch.Tensor], fixed: tuple[float, float] | None, previous=None) -> tuple[dict, dict]:
    """Each tensor's (c, r) for the next round.  With ``fixed`` = (c, r): that box for every tensor, weights
    and biases alike (paper 001: "for each weight, we clip them in a fixed range").  Else the adaptive
    per-layer range of the averaged ``params`` (:func:`layer_ranges`); with ``previous`` = the (c, r) every
    client clipped its values to in this round, the average is first projected onto that box: the mean of
    clipped values lies in it, so what falls outside is the mechanism's noise.  The projection reads only
    the released average and the broadcast box (post-processing: no privacy cost), and the range it gives
    can shrink but never widen, so it cannot diverge however few clients answer or however small epsilon
    is; without it the noisy average's spread sets the range, which widens by up to (e^eps + 1) / (e^eps - 1)
    a round when the noise dominates."""
    if fixed is not None:
        return {k: fixed[0] for k in params}, {k: fixed[1] for k in params}
    if previous is not None:
        c0, r0 = previous
        params = {k: v.clamp(c0[k] - r0[k], c0[k] + r0[k]) for k, v in params.items()}
    return layer_ranges(params)


class Server:
    """Selects each round's clients, averages what reaches it, keeps the global weights and ranges."""

    def __init__(
        self, params: dict, n_clients: int, fraction: float, seed: int, key: str, ranges, rule="projected", clip=None
    ):
        """``ranges``: 'adaptive' or a fixed (c, r); ``rule``: how an adaptive range reads the average
        (:data:`ADAPTIVE_RULES`, :func:`ranges_for`); ``clip``: a regular expression over tensor names, whose
        noise-free uploads the clients clip to the broadcast box (``clip-c<c>-r<r>`` runs: what a fixed range
        costs without a coin, issue 51)."""
        self.clip = None if clip is None else re.compile(clip)
        if not 0 < fraction <= 1:
            raise ValueError(f"ldpfl fraction of clients per round must be in (0, 1], got {fraction}")
        if rule not in ADAPTIVE_RULES:
            raise ValueError(f"unknown adaptive range rule {rule!r}; allowed: {', '.join(ADAPTIVE_RULES)}")
        self.rule = rule
        self.params, self.n_clients, self.seed, self.key = params, n_clients, seed, key
        self.per_round = max(1, int(round(fraction * n_clients)))
        self.fixed = None if ranges == "adaptive" else tuple(float(v) for v in ranges)
        # the first round's ranges come from the initial weights, which the server chose
        self.c, self.r = ranges_for(params, self.fixed)

    def select(self, t: int) -> np.ndarray:
        """Round t's clients: ``per_round`` of them uniformly at random without replacement."""
        g = rng(self.seed, "ldpfl-select", self.key, t)
        return np.sort(g.choice(self.n_clients, self.per_round, replace=False))

    def clipped(self, own: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """A client's noise-free upload: every tensor ``clip`` names clipped to this round's box."""
        return {
            k: v.clamp(self.c[k] - self.r[k], self.c[k] + self.r[k]) if self.clip.fullmatch(k) else v
            for k, v in own.items()
        }

    def update(self, aggregate: dict) -> None:
        self.params = {k: v.detach() for k, v in aggregate.items()}
        previous = (self.c, self.r) if self.rule == "projected" else None
        self.c, self.r = ranges_for(self.params, self.fixed, previous)


def groups(clients: list[Client], size: int) -> list[list[Client]]:
    """Clients in groups of at most ``size`` that hold equally many records (an IID deal can differ by one)."""
    out = []
    for n in sorted({len(c.x) for c in clients}):
        same = [c for c in clients if len(c.x) == n]
        out += [same[i : i + size] for i in range(0, len(same), size)]
    return out


class FedAvg:
    """Federated averaging as a round protocol: round 0 is the initial model; in round t the selected
    clients train locally, perturb (unless ``mechanism`` is None) and report through the shuffler; noise-free
    under the server's ``clip``, each client first clips its weights to the broadcast box."""

    def __init__(
        self,
        model,
        clients: list[Client],
        server: Server,
        trainer: LocalSGD,
        rounds: int,
        test: tuple,
        *,
        privacy: tuple | None = None,
        seed: int = 0,
    ):
        """``test``: the (x, y) the global model is evaluated on; ``privacy``: (mechanism, noise_seed),
        where ``noise_seed(t, cid)`` is the torch seed of client cid's coins in round t."""
        self.model, self.clients, self.server, self.trainer = model, clients, server, trainer
        (self.x_test, self.y_test), self.rounds, self.seed = test, rounds, seed
        self.mechanism, self.noise_seed = privacy if privacy is not None else (None, None)
        if self.mechanism is not None and server.clip is not None:
            raise ValueError("LDP-FL: the server's clip rule is for noise-free runs (a mechanism clips to its range)")
        self.joined = np.zeros(len(clients), dtype=int)  # rounds each client has joined

    def play(self, t: int) -> None:
        if t == 0:
            return
        s = self.server
        chosen = [self.clients[i] for i in s.select(t)]
        shapes = {k: v.shape for k, v in s.params.items()}
        device = next(iter(s.params.values())).device
        if self.mechanism is None:
            reports = SummedReports(shapes, device)
        else:
            reports = twopoint.ShuffledReports(shapes, s.c, s.r, self.mechanism.epsilon, device)
        for part in groups(chosen, self.trainer.group):
            orders = shuffles(self.seed, s.key, t, part, self.trainer.epochs)
            trained = self.trainer.train(s.params, part, orders)
            for j, c in enumerate(part):
                own = {k: v[j] for k, v in trained.items()}
                if self.mechanism is None:
                    reports.add(own if s.clip is None else s.clipped(own))
                else:  # client c's coins, from its own generator for this round
                    diverged = sum(int(torch.isnan(v).sum()) for v in own.values())
                    if diverged:  # perturb_bits sends each as the box's centre, a fair coin
                        log.warning(
                            "round %d: a client's training gave %d NaN weights, sent as fair coins", t, diverged
                        )
                    gen = torch.Generator().manual_seed(self.noise_seed(t, c.cid))
                    eps = self.mechanism.epsilon
                    reports.add({k: twopoint.perturb_bits(v, s.c[k], s.r[k], eps, gen) for k, v in own.items()})
                self.joined[c.cid] += 1
        s.update(reports.mean())

    def evaluate(self, t: int) -> list[dict]:
        self.model.load_state_dict(self.server.params, strict=True)
        return [
            {
                "round": t,
                "party": -1,  # the global model
                "clients": 0 if t == 0 else self.server.per_round,
                "accuracy": loop.accuracy(self.model, self.x_test, self.y_test),
                "range_r_mean": float(np.mean(list(self.server.r.values()))),
            }
        ]

    def state(self) -> dict:
        s = self.server
        return {"params": {k: v.cpu() for k, v in s.params.items()}, "c": s.c, "r": s.r, "joined": self.joined}

    def restore(self, state: dict) -> None:
        device = next(iter(self.server.params.values())).device
        self.server.params = {k: v.to(device) for k, v in state["params"].items()}
        self.server.c, self.server.r, self.joined = state["c"], state["r"], state["joined"]

    def describe(self, rows: list[dict]) -> str:
        return f"global accuracy {rows[0]['accuracy']:.4f} ({rows[0]['clients']} clients)"


# ------------------------------------------------------------------------------------ stage entry


def client_noise_seed(seed: int, randomness: str, release: dict, t: int, cid: int) -> int:
    """The torch seed of client ``cid``'s coins in round t: keyed by the run's wildcards, t and cid."""

    return release_torch_seed(seed, randomness, "ldpfl", {**release, "round": t, "client": cid})


def run_row(job: Job, settings: LdpflSettings) -> dict:
    """One LDP-FL (or noise-free federated averaging; ``clip-c<c>-r<r>``: its uploads clipped to that box)
    run: the job's wildcards (scenario, flmech, frac, rounds) name the release; client i's coins in round t
    are keyed by all of them, t and i.  Reads the inputs assignment, private_train (any file of the private
    records' folder) and test.  Writes the outputs result (the row), rounds (global accuracy per round),
    releases (one ledger row per client: its composed guarantee, with the paper's per-weight claim in
    ``paper_*`` columns), model (the final global model)."""

    release, seed, randomness, checkpoint, out = job.release, job.seed, job.randomness, job.checkpoint, job.output
    assignment_path, private_dir = job.input["assignment"], Path(job.input["private_train"]).parent
    scenario = release["scenario"]
    # runs that differ only in their mechanism are paired: the same initial model, clients and batch orders
    key = "/".join(str(release[k]) for k in ("scenario", "frac", "rounds"))
    run = LdpflRun.parse(release["flmech"])
    ranges = run.radius
    mechanism = registry.parse(run.spec) if run.spec else None
    if mechanism is not None and mechanism.locality != "weights":
        raise ValueError(f"{run.spec!r} is not a weight perturbation (allowed: twopoint)")
    fraction, rounds = float(release["frac"]), int(release["rounds"])
    dev = loop.start(job.threads, settings.device, job.precision)
    x_test, y_test, meta = load_labelled(job.input["test"], dev)
    clients = [
        Client(i, loop.to_device(x, dev), torch.as_tensor(y, device=dev))
        for i, (x, y) in enumerate(every_party(assignment_path, private_dir))
    ]  # client i's FedAvg code path touches clients[i] only
    train_seed = torch_seed(seed, "ldpfl", key)
    loop.seed_everything(train_seed)
    model = initial_model(settings, tuple(x_test.shape[1:]), len(meta["task_classes"])).to(dev)
    start = {k: v.detach().clone() for k, v in model.named_parameters()}
    rule = settings.adaptive_range
    box = ranges if ranges is not None else (0.0, 1.0)  # noise-free: a box nothing reads
    server = Server(start, len(clients), fraction, seed, key, box, rule, clip=".*" if run.clipped else None)
    mode = client_mode(settings.mode, model, tuple(x_test.shape[1:]))
    trainer = LocalSGD(model, settings.lr, settings.local_epochs, settings.batch, mode, settings.group)

    def noise_seed(t: int, cid: int) -> int:
        return client_noise_seed(seed, randomness, job.release_id, t, cid)

    test = (x_test, y_test)
    proto = FedAvg(model, clients, server, trainer, rounds, test, privacy=(mechanism, noise_seed), seed=seed)
    ns = [len(c.x) for c in clients]
    log.info(
        "%s %s: %d clients (%d-%d records), %d per round, %d rounds, %s, %d test, device %s",
        scenario, release["flmech"], len(clients), min(ns), max(ns), server.per_round, rounds,
        settings.arch, len(x_test), dev,
    )  # fmt: skip
    log.info("client training: %s (ldpfl.mode %s)", mode, settings.mode)
    same = {k: v for k, v in asdict(settings).items() if k != "group"}  # the group changes no number
    fp = fingerprint(job.code, release, same, seed, randomness, str(assignment_path), train_seed)
    planned = rounds * server.per_round * settings.local_epochs * float(np.mean(ns))
    with loop.progress(planned, f"LDP-FL {release['flmech']}"):
        history = run_rounds(proto, checkpoint, fp)

    d = sum(v.numel() for v in start.values())
    ledger, guarantee = [], NO_PRIVACY
    if mechanism is not None:
        joined = proto.joined
        guarantee = mechanism.client_guarantee(d, int(joined.max()))
        claim = mechanism.guarantee(1)
        paper = {
            "paper_epsilon": claim.epsilon,
            "paper_protected_unit": claim.unit,
            "paper_accountant": claim.accountant,
        }
        for c in clients:  # one row per client: its composed guarantee, and the paper's claim beside it
            ledger.append(
                release_row(
                    "LDP-FL",
                    scenario,
                    f"{out['result'].rsplit('/', 1)[0]}#client-{c.cid}",
                    c.cid,
                    mechanism.name,
                    mechanism.client_guarantee(d, int(joined[c.cid])),
                    # + the round, per draw
                    drawn=Draw(randomness, release_key("ldpfl", {**job.release_id, "client": c.cid})),
                    n=len(c.x),
                    seed=seed,
                    weights=d,
                    rounds_joined=int(joined[c.cid]),
                    **paper,
                )
            )
    write_releases(ledger, out["releases"])
    table = pd.DataFrame(history).assign(scenario=scenario, run=release["flmech"], fraction=fraction)
    write_table(pa.Table.from_pandas(table, preserve_index=False), out["rounds"])
    model.load_state_dict(server.params)
    save_model(model, out["model"], scenario=scenario, run=release["flmech"])
    final = history[-1]
    row = result_row(
        guarantee,
        method="LDP-FL" if mechanism else "FedAvg",
        scenario=scenario,
        public_dataset=None,
        private_dataset=meta["dataset"],
        mechanism=mechanism.name if mechanism else "none",
        delta_vacuous=False,
        accuracy=final["accuracy"],
        test_records=len(x_test),
        n=min(ns),
        parties=len(clients),
        clients=len(clients),
        clients_per_round=server.per_round,
        fraction=fraction,
        rounds=rounds,
        range="adaptive" if ranges == "adaptive" else None if ranges is None else f"c={ranges[0]:g}, r={ranges[1]:g}",
        weights=d,
        arch=settings.arch,
        init=settings.init,
        # a fixed box clips every initial value outside it in the first round (issue 51)
        init_in_box=share_in_box(start, *ranges) if isinstance(ranges, tuple) else None,
        lr=settings.lr,
        batch=settings.batch,
        local_epochs=settings.local_epochs,
        client_training=mode,
        paper_epsilon=mechanism.epsilon if mechanism else None,
        paper_protected_unit=mechanism.guarantee(1).unit if mechanism else None,
        max_rounds_joined=int(proto.joined.max()),
        wall_seconds=wall_seconds(history),
        **loop.where(dev),
        seed=seed,
        preset=job.preset,
        run=release["flmech"],
        randomness=randomness if mechanism else None,
    )
    write_json(row, out["result"])
    clear_checkpoint(checkpoint)
    log.info("final accuracy %.4f in %.0f s", row["accuracy"], row["wall_seconds"])
    return row
