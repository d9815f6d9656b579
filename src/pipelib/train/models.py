"""The project's models, defined once: FedMD's heterogeneous CNNs (Li & Wang 2019, as used by paper 002),
torchvision's ResNets (LDP-DL's paper preset) and LDP-FL's plain CNNs (:class:`PlainCNN`).

An architecture is named by its spec, so that a name is a cache key and a config value at once:

* ``cnn2-<n1>-<n2>-d<p>``:      conv3x3(n1, same) BN ReLU dropout avgpool2(s1, same)
                                 conv3x3(n2, stride 2, valid) BN ReLU dropout, flatten, linear
* ``cnn3-<n1>-<n2>-<n3>-d<p>``: conv3x3(n1, same) BN ReLU dropout avgpool2(s1, same)
                                 conv2x2(n2, stride 2) BN ReLU dropout avgpool2(s2)
                                 conv3x3(n3, stride 2) BN ReLU dropout, flatten, linear

The classifier is a bias-free linear layer over public + private task classes (FedMD trains one
output layer for both; its Keras code also puts an L2 penalty of 1e-3 on that layer, see
``classifier_weight_decay``).  Keras' 'same' average pooling ignores the padded cell; here the
last row/column is zero-padded, a difference confined to the image border.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

import torch
import torchvision
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from ..vocab import ARCH_PATTERN

# Keras l2(1e-3) adds 1e-3 * sum(w^2) to the loss: gradient 2e-3 * w, i.e. coupled weight decay 2e-3.
classifier_weight_decay = 2e-3


@dataclass(frozen=True)
class Arch:
    kind: str  # "cnn2" or "cnn3"
    widths: tuple[int, ...]
    dropout: float

    @property
    def name(self) -> str:
        if self.kind == "resnet":
            return f"resnet{self.widths[0]}"
        if self.kind in PLAIN:
            return f"{self.kind}-{'-'.join(map(str, self.widths))}"
        return f"{self.kind}-{'-'.join(map(str, self.widths))}-d{self.dropout:g}"


def parse_arch(name: str) -> Arch:
    """Parse an architecture name such as ``cnn2-128-256-d0.2`` (or ``resnet18``)."""
    if not re.fullmatch(ARCH_PATTERN, name):
        raise ValueError(
            f"bad architecture name {name!r}; expected e.g. cnn2-128-256-d0.2, cnn3-64-128-256-d0.2, resnet18, "
            "fedcnn-32-64-512 or vgg-32-64-128-256"
        )
    if name.startswith("resnet"):
        return Arch("resnet", (int(name[6:]),), 0.0)
    if name.split("-")[0] in PLAIN:
        kind, *rest = name.split("-")
        return Arch(kind, tuple(int(w) for w in rest), 0.0)
    kind, *rest = name.split("-")
    return Arch(kind, tuple(int(w) for w in rest[:-1]), float(rest[-1][1:]))


def _block(c_in, c_out, kernel, stride, padding, dropout):
    return [
        nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=padding),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
        nn.Dropout(dropout),
    ]


class FedMDCNN(nn.Module):
    """A FedMD CNN for (C, H, W) inputs and ``n_classes`` outputs (logits)."""

    def __init__(self, arch: Arch, in_shape: tuple[int, int, int], n_classes: int):
        super().__init__()
        c, p = in_shape[0], arch.dropout
        same_pool = [nn.ZeroPad2d((0, 1, 0, 1)), nn.AvgPool2d(2, stride=1)]
        if arch.kind == "cnn2":
            n1, n2 = arch.widths
            layers = _block(c, n1, 3, 1, 1, p) + same_pool + _block(n1, n2, 3, 2, 0, p)
        elif arch.kind == "cnn3":
            n1, n2, n3 = arch.widths
            layers = (
                _block(c, n1, 3, 1, 1, p)
                + same_pool
                + _block(n1, n2, 2, 2, 0, p)
                + [nn.AvgPool2d(2, stride=2)]
                + _block(n2, n3, 3, 2, 0, p)
            )
        else:
            raise ValueError(f"unknown architecture kind {arch.kind!r}")
        self.features = nn.Sequential(*layers, nn.Flatten())
        with torch.no_grad():
            n_features = self.features(torch.zeros(2, *in_shape)).shape[1]  # 2: BatchNorm in train mode
        self.classifier = nn.Linear(n_features, n_classes, bias=False)
        self.arch, self.in_shape, self.n_classes = arch, tuple(in_shape), n_classes

    def forward(self, x):
        return self.classifier(self.features(x))


class ResNet(nn.Module):
    """torchvision's ResNet-18/34/50, from scratch (no pretrained weights offline), for small images: a
    3x3 stride-1 stem without max-pooling (the CIFAR variant of He et al. 2016) taking any number of input
    channels; the final linear layer is ``classifier`` as in :class:`FedMDCNN`."""

    def __init__(self, arch: Arch, in_shape: tuple[int, int, int], n_classes: int):
        super().__init__()

        net = getattr(torchvision.models, arch.name)(weights=None, num_classes=n_classes)
        net.conv1 = nn.Conv2d(in_shape[0], 64, 3, stride=1, padding=1, bias=False)
        net.maxpool = nn.Identity()
        self.classifier, net.fc = net.fc, nn.Identity()
        self.features = net
        self.arch, self.in_shape, self.n_classes = arch, tuple(in_shape), n_classes

    def forward(self, x):
        return self.classifier(self.features(x))


class PlainCNN(nn.Module):
    """The federated-averaging models of LDP-FL (paper 001), without normalization layers (nothing but
    weights and biases to perturb and average; buffers would not survive either):

    * ``fedcnn-<c1>-<c2>-<h>``: McMahan et al.'s (2017) "CNN": conv5x5(c1) ReLU maxpool2,
      conv5x5(c2) ReLU maxpool2, linear(h) ReLU, linear (the paper's "two-layer CNN").
    * ``vgg-<c1>-<c2>-<c3>-<h>``: a small VGG, three blocks of two conv3x3 + ReLU and maxpool2 with
      c1, c2, c3 channels, then linear(h) ReLU, linear (the paper's "small VGG" for CIFAR-10).
    """

    def __init__(self, arch: Arch, in_shape: tuple[int, int, int], n_classes: int):
        super().__init__()
        c = in_shape[0]
        if arch.kind == "fedcnn":
            c1, c2, hidden = arch.widths
            layers = [nn.Conv2d(c, c1, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2)]
            layers += [nn.Conv2d(c1, c2, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2)]
        else:
            *channels, hidden = arch.widths
            layers = []
            for width in channels:
                layers += [nn.Conv2d(c, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1)]
                layers += [nn.ReLU(), nn.MaxPool2d(2)]
                c = width
        layers.append(nn.Flatten())
        with torch.no_grad():
            n_features = nn.Sequential(*layers)(torch.zeros(1, *in_shape)).shape[1]
        self.features = nn.Sequential(*layers, nn.Linear(n_features, hidden), nn.ReLU())
        self.classifier = nn.Linear(hidden, n_classes)
        self.arch, self.in_shape, self.n_classes = arch, tuple(in_shape), n_classes
        he_init(self)

    def forward(self, x):
        return self.classifier(self.features(x))


def he_init(model: nn.Module) -> None:
    """An initialization under which a deep ReLU stack without normalization trains (He et al. 2015):
    convolutions Kaiming-normal over their fan-out (torchvision's VGG), hidden linear layers Kaiming-normal
    over their fan-in, the classifier LeCun-normal (std 1 / sqrt(fan-in)).  PyTorch's default weights
    (uniform, std 1 / sqrt(3 fan-in)) shrink the signal by about 0.4 per ReLU layer, so the eight-layer
    VGG starts as a near-constant function that plain SGD does not leave (docs/methods.md).  Biases keep
    PyTorch's default, uniform in +-1 / sqrt(fan-in), not zero: LDP-FL's adaptive range starts from the
    initial values and widens by at most a factor (e^eps + 1) / (e^eps - 1) a round, so an all-zero bias
    would stay frozen at zero."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.Linear) and m is not model.classifier:
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
    nn.init.normal_(model.classifier.weight, 0.0, model.classifier.in_features**-0.5)


PLAIN = ("fedcnn", "vgg")


def build(name: str, in_shape, n_classes: int) -> nn.Module:
    """Build the architecture ``name`` for inputs of shape (C, H, W)."""
    arch = parse_arch(name)
    kind = ResNet if arch.kind == "resnet" else PlainCNN if arch.kind in PLAIN else FedMDCNN
    return kind(arch, tuple(in_shape), n_classes)


def training_flops(model: nn.Module, in_shape, batch: int = 8) -> float:
    """FLOPs of one training step (forward and backward) per image, counted by ``torch.utils.flop_counter``
    on a zero batch through a copy of ``model`` in eval mode (no random draw, no BatchNorm statistics touched)."""
    probe = copy.deepcopy(model).eval()
    x = torch.zeros(batch, *in_shape, device=next(probe.parameters()).device)
    with FlopCounterMode(display=False) as counter:
        probe(x).float().sum().backward()
    return counter.get_total_flops() / batch


def optimizer(model: nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam (FedMD's optimizer) with FedMD's L2 penalty on the classifier's weights only."""
    head = [model.classifier.weight]
    body = [p for p in model.parameters() if p is not model.classifier.weight]
    return torch.optim.Adam([{"params": body}, {"params": head, "weight_decay": classifier_weight_decay}], lr=lr)
