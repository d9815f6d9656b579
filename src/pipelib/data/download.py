"""Fetching a dataset with torchvision for users who are online (rule download); the ingest jobs read
the files from the data root and never import torchvision."""

from __future__ import annotations

import torchvision.datasets as tvd

from .ingest import MissingDataError, dataset


def download(name: str, data_root) -> None:
    """Fetch dataset ``name`` into ``data_root`` with torchvision (needs internet)."""
    spec = dataset(name)
    if spec.torchvision is None:
        raise MissingDataError(f"dataset {name!r} has no download; see ../shared/data/README.md")
    cls = getattr(tvd, spec.torchvision)
    for train in (True, False):
        cls(root=str(data_root), train=train, download=True)
