"""Every architecture a preset names trains from its initialization (issue 27).

The floor: at initialization, the logits must vary across inputs by a standard deviation of at least
0.01 (per logit, over a batch of random inputs, averaged over logits).  Below that the softmax is the same
distribution for every input to within about 1 %, so the loss gradient carries almost nothing about the
input and plain SGD sits on the plateau: PyTorch's default initialization gave the plain VGGs about 1e-4
(and noise-free FedAvg on CIFAR-10 stayed at chance), the He initialization of ``models.he_init`` gives
them 0.02-0.05 and every other preset architecture 0.05 or more.
"""

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import yaml
from torch import nn

from pipelib.train import models

REPO = Path(__file__).resolve().parents[1]
LOGIT_STD_FLOOR = 1e-2


def preset_architectures() -> list[str]:
    """Every architecture name in config.yaml and presets/*.yaml."""
    names = set()
    for path in [REPO / "config.yaml", *sorted((REPO / "presets").glob("*.yaml"))]:
        text = yaml.safe_dump(yaml.safe_load(path.read_text()))
        names |= {m.group(0) for m in re.finditer(models.ARCH_PATTERN, text)}
    return sorted(n for n in names if re.fullmatch(models.ARCH_PATTERN, n))


def _train_mode_without_dropout(model: nn.Module) -> None:
    """Train mode (BatchNorm normalizes the batch, as in training) with dropout off, so that the spread
    of the logits comes from the inputs alone."""
    model.train()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.eval()


def test_the_presets_name_the_architectures_of_every_method():
    names = preset_architectures()
    for kind in ("cnn2", "cnn3", "fedcnn", "vgg", "resnet"):
        assert any(n.startswith(kind) for n in names), (kind, names)


def starts_input_dependent_and_descends(model: nn.Module, shape, name: str) -> None:
    """The floor on the logits' spread at initialization, and one SGD step lowering the loss."""
    _train_mode_without_dropout(model)
    g = torch.Generator().manual_seed(1)
    x = torch.rand(32, *shape, generator=g) * 2 - 1  # the training loop's pixel range [-1, 1]
    y = torch.randint(0, 10, (32,), generator=g)
    logits = model(x)
    spread = logits.std(dim=0).mean().item()
    assert spread >= LOGIT_STD_FLOOR, f"{name}: logits vary by {spread:.2e} across inputs at initialization"
    before = F.cross_entropy(logits, y)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    opt.zero_grad()
    before.backward()
    opt.step()
    with torch.no_grad():
        after = F.cross_entropy(model(x), y)
    assert after < before, f"{name}: one SGD step raised the loss ({before:.5f} -> {after:.5f})"


@pytest.mark.parametrize("name", preset_architectures())
@pytest.mark.parametrize("shape", [(1, 28, 28), (3, 32, 32)], ids=["gray28", "rgb32"])
def test_every_preset_architecture_starts_input_dependent_and_descends(name, shape):
    torch.manual_seed(0)
    starts_input_dependent_and_descends(models.build(name, shape, 10), shape, name)


@pytest.mark.parametrize("preset", ["paper", "reduced", "tiny"])
def test_every_ldpfl_model_trains_from_the_initialization_its_preset_sets(preset):
    """LDP-FL's models as its jobs build them (``ldpfl.init``, per dataset): He or PyTorch's default."""
    from pipelib import config as cfgmod
    from pipelib.methods import ldpfl
    from pipelib.settings import LdpflSettings

    files = [REPO / "config.yaml"] + ([] if preset == "paper" else [REPO / f"presets/{preset}.yaml"])
    config = cfgmod.validate(cfgmod.load(*files))
    for label, entry in config["ldpfl"]["datasets"].items():
        settings = LdpflSettings.of(config, entry["scenario"])
        shape = (3, 32, 32) if label == "CIFAR-10" else (1, 28, 28)
        torch.manual_seed(0)
        model = ldpfl.initial_model(settings, shape, 10)
        starts_input_dependent_and_descends(model, shape, f"{preset} {label} {settings.arch} ({settings.init})")


def test_default_initialization_of_the_plain_vgg_is_below_the_floor():
    """The floor separates the defect: the same VGG with PyTorch's default initialization fails it."""
    torch.manual_seed(0)
    model = models.build("vgg-16-32-64-128", (3, 32, 32), 10)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            m.reset_parameters()  # PyTorch's default
    x = torch.rand(32, 3, 32, 32, generator=torch.Generator().manual_seed(1)) * 2 - 1
    with torch.no_grad():
        assert model(x).std(dim=0).mean().item() < LOGIT_STD_FLOOR / 10


def test_he_init_statistics():
    """Convolutions: std sqrt(2 / fan-out); hidden linear: sqrt(2 / fan-in); classifier: 1 / sqrt(fan-in);
    biases PyTorch's default, uniform in +-1 / sqrt(fan-in) (never all equal: LDP-FL's adaptive range)."""
    torch.manual_seed(0)
    model = models.build("fedcnn-32-64-512", (1, 28, 28), 10)
    conv2 = model.features[3]
    assert conv2.weight.std().item() == pytest.approx((2 / (64 * 25)) ** 0.5, rel=0.05)
    hidden = model.features[-2]
    assert hidden.weight.std().item() == pytest.approx((2 / hidden.in_features) ** 0.5, rel=0.05)
    assert model.classifier.weight.std().item() == pytest.approx(512**-0.5, rel=0.1)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            assert 0 < float(m.bias.detach().abs().max()) <= fan_in**-0.5 and float(m.bias.detach().std()) > 0
