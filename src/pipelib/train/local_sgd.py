"""Plain minibatch SGD for many small models at once, each on its own records only: LDP-FL's clients
(:mod:`pipelib.methods.ldpfl`) and PATE's own teachers (:mod:`pipelib.methods.teachers`).

* A :class:`Client` holds its own shard (x, y) only.
* :class:`LocalSGD` trains a group of clients from given start weights: E epochs of plain minibatch SGD
  each, either all at once (``vmap``: :func:`torch.func.vmap` maps the one-client step over stacked copies
  of the weights and the clients' own batches; no operation mixes clients) or one after another
  (``loop``); both give the same weights up to float rounding (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

from ..seeding import rng
from . import loop


@dataclass
class Client:
    """One client: its id and its own records (uint8 images, labels) only."""

    cid: int
    x: torch.Tensor
    y: torch.Tensor


def shuffles(seed: int, key: str, t: int, clients: list[Client], epochs: int) -> list[torch.Tensor]:
    """Each client's mini-batch order in round t: ``epochs`` permutations of its own records, concatenated."""
    out = []
    for c in clients:
        g = torch.Generator().manual_seed(int(rng(seed, "ldpfl-batches", key, t, c.cid).integers(2**63 - 1)))
        out.append(torch.cat([torch.randperm(len(c.x), generator=g) for _ in range(epochs)]))
    return out


class LocalSGD:
    """E epochs of minibatch SGD (lr ``lr``, batch ``batch``, no momentum: W <- W - lr grad) from the
    global weights, for a group of clients with shards of equal size."""

    def __init__(self, model: torch.nn.Module, lr: float, epochs: int, batch: int, mode: str = "vmap", group: int = 50):
        """``group``: clients trained together in one call (a speed setting: it changes no number)."""
        if mode not in ("vmap", "loop"):
            raise ValueError(f"unknown client training mode {mode!r}; allowed: vmap, loop")
        self.model, self.lr, self.epochs, self.batch, self.mode = model, lr, epochs, batch, mode
        self.group = group

    def steps(self, n: int) -> list[tuple[int, int]]:
        """(start, stop) of every mini-batch of one client's ``epochs`` x ``n`` shuffled records."""
        per_epoch = [(i, min(i + self.batch, n)) for i in range(0, n, self.batch)]
        return [(e * n + i, e * n + j) for e in range(self.epochs) for i, j in per_epoch]

    def train(self, start: dict, clients: list[Client], orders: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        """The clients' trained weights, stacked: name -> (clients, ...)."""
        sizes = {len(c.x) for c in clients}
        if len(sizes) != 1:
            raise ValueError(f"clients of one group must hold equally many records, got sizes {sorted(sizes)}")
        return (self._vmap if self.mode == "vmap" else self._loop)(start, clients, orders, sizes.pop())

    def _vmap(self, start, clients, orders, n):

        def loss(params, x, y):  # one client's batch
            with loop.autocast():
                return F.cross_entropy(functional_call(self.model, params, (x,)), y)

        step = vmap(grad(loss))
        k = len(clients)
        params = {name: p.detach().unsqueeze(0).repeat(k, *[1] * p.dim()) for name, p in start.items()}
        xs = torch.stack([c.x for c in clients])  # (k, n, C, H, W): row i is client i's shard
        ys = torch.stack([c.y for c in clients])
        order = torch.stack(orders).to(xs.device)
        rows = torch.arange(k, device=xs.device)[:, None]
        for i, j in self.steps(n):
            idx = order[:, i:j]
            grads = step(params, loop.scale(xs[rows, idx]), ys[rows, idx])
            params = {name: p - self.lr * grads[name] for name, p in params.items()}
            loop.advance(k * (j - i))
        return params

    def _loop(self, start, clients, orders, n):
        out = {name: [] for name in start}
        for c, order in zip(clients, orders):
            self.model.load_state_dict(start, strict=True)
            self.model.train()
            opt = torch.optim.SGD(self.model.parameters(), lr=self.lr)
            order = order.to(c.x.device)
            for i, j in self.steps(len(c.x)):
                idx = order[i:j]
                with loop.autocast():
                    loss = F.cross_entropy(self.model(loop.scale(c.x[idx])), c.y[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                loop.advance(j - i)
            for name, p in self.model.named_parameters():
                out[name].append(p.detach().clone())
        return {name: torch.stack(v) for name, v in out.items()}
