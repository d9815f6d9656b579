"""Training precision (pipelib.train.loop.set_precision): bf16 autocast in the shared loop and in LDP-FL's
client training, fp32 weights throughout, the fallback where bf16 is not native, and the result row's record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from torch import nn

from pipelib import stages
from pipelib.train import local_sgd, loop
from pipelib.train.models import build

BF16 = loop.bf16_supported("cpu")


@pytest.fixture(autouse=True)
def fp32_after():
    yield
    loop.set_precision("fp32", "cpu")


class Probe(nn.Module):
    """A linear model that records the dtype its matrix product ran in."""

    def __init__(self):
        super().__init__()
        self.fc, self.seen = nn.Linear(4, 2), []

    def forward(self, x):
        out = self.fc(x)
        self.seen.append(out.dtype)
        return out


def fit_probe(precision: str) -> Probe:
    loop.set_precision(precision, "cpu")
    model = Probe()
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    loop.fit(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        (x, y),
        loop.Objective(prep=lambda v: v),
        1,
        8,
        torch.Generator(),
    )
    return model


def test_fp32_trains_in_float32_and_the_row_says_so():
    model = fit_probe("fp32")
    assert set(model.seen) == {torch.float32}
    assert loop.where("cpu")["precision"] == "fp32"


@pytest.mark.skipif(not BF16, reason="this CPU has no native bf16")
def test_bf16_runs_the_forward_pass_in_bfloat16_and_keeps_float32_weights():
    model = fit_probe("bf16")
    assert set(model.seen) == {torch.bfloat16}
    assert model.fc.weight.dtype == torch.float32 and model.fc.weight.grad.dtype == torch.float32
    assert loop.where("cpu")["precision"] == "bf16"
    # evaluation stays in float32 (answers, accuracies)
    assert loop.predict(model, torch.zeros(3, 4, dtype=torch.uint8)).dtype == torch.float32


def test_bf16_without_native_support_falls_back_to_fp32(monkeypatch):
    monkeypatch.setattr(loop, "bf16_supported", lambda device: False)
    assert loop.set_precision("bf16", "cpu") == "fp32"
    assert loop.where("cpu")["precision"] == "fp32"
    assert isinstance(loop.autocast(), type(loop.autocast())) and not isinstance(loop.autocast(), torch.autocast)


def test_an_unknown_precision_is_an_error_naming_the_choices():
    with pytest.raises(ValueError, match="fp16.*fp32, bf16"):
        loop.set_precision("fp16", "cpu")


@pytest.mark.skipif(not BF16, reason="this CPU has no native bf16")
@pytest.mark.parametrize("mode", ["vmap", "loop"])
def test_ldpfl_clients_train_under_bf16_autocast_close_to_fp32(mode):
    torch.manual_seed(0)
    model = build("fedcnn-4-8-16", (1, 28, 28), 2)
    g = torch.Generator().manual_seed(1)
    clients = [
        local_sgd.Client(
            i,
            torch.randint(0, 255, (20, 1, 28, 28), generator=g, dtype=torch.uint8),
            torch.randint(0, 2, (20,), generator=g),
        )
        for i in range(2)
    ]
    orders = local_sgd.shuffles(0, "run", 1, clients, 1)
    start = {k: v.detach().clone() for k, v in model.named_parameters()}
    full = local_sgd.LocalSGD(model, 0.05, 1, 10, mode).train(start, clients, orders)
    loop.set_precision("bf16", "cpu")
    half = local_sgd.LocalSGD(model, 0.05, 1, 10, mode).train(start, clients, orders)
    for k in full:
        assert half[k].dtype == torch.float32
        step = float((full[k] - start[k]).norm())
        # a different rounding, not a different update: off by a small share of the step the clients took
        assert not torch.equal(half[k], full[k])
        assert float((half[k] - full[k]).norm()) <= 0.1 * step


def test_every_training_rule_hands_its_precision_to_the_job():
    """Each rule that trains (a stage with planned work in pipelib.stages) passes ``precision`` among its
    params, so that the method's ``precision`` setting reaches pipelib.job.Job (a rule without it trains in
    fp32 whatever the config says: the fedmd rule did, until the stage-time sample's bf16 run showed it).
    DP-SGD trains in fp32 by design; embed_public and distill_votes only run fitted models (an encoder,
    PATE's teachers)."""
    root = Path(__file__).resolve().parents[1] / "workflow" / "rules"
    blocks = {}
    for smk in root.glob("*.smk"):
        parts = re.split(r"^(?=rule \w+:|use rule \w+ as \w+)", smk.read_text(), flags=re.M)
        for part in parts:
            m = re.match(r"(?:rule (\w+):|use rule \w+ as (\w+))", part)
            if m:
                blocks[m[1] or m[2]] = part
    training = {r for r, s in stages.stages().items() if s.work} - {"dpsgd", "embed_public", "distill_votes"}
    assert training <= set(blocks)
    assert [r for r in sorted(training) if "precision=" not in blocks[r]] == []
