"""Image tables as device tensors, the way every training stage reads them."""

from __future__ import annotations

import numpy as np
import torch

from ..io import read_images
from ..train.loop import to_device


def load_labelled(path, device, offset: int = 0):
    """An image table as device tensors: (uint8 images, int64 labels + offset, metadata)."""
    frame, images, meta = read_images(path)
    y = torch.as_tensor(frame["label"].to_numpy().astype(np.int64) + offset, device=device)
    return to_device(images, device), y, meta


def load_public(path, device):
    """The public images a scenario's server may query (the partition's public table), on ``device``."""
    _, images, meta = read_images(path)
    return to_device(images, device), meta
