"""Data-independent image features: HOG (optionally of deskewed digits, at several cell sizes),
L2-normalised.  Kept apart from :mod:`pipelib.represent` (torch, UMAP) so that the jobs that only compute
HOG features (LDP-DL's owners, reverse k-NN's HOG teachers, the HOG embedding jobs) do not import torch."""

from __future__ import annotations

import numpy as np
from scipy import ndimage
from skimage.feature import hog

from .io import read_images, save_npy


def l2_normalize(x: np.ndarray) -> np.ndarray:
    return (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def deskew(images: np.ndarray) -> np.ndarray:
    """Straighten slanted strokes of (N, H, W, 1) uint8 grayscale images: the shear about the centre of
    mass that makes cov(x, y) zero, which also moves the centre of mass to the image centre (the
    classic MNIST deskewing).  Blank images are returned unchanged."""
    if images.shape[-1] != 1:
        raise ValueError(f"deskew needs grayscale images; got {images.shape[-1]} channels")
    h, w = images.shape[1:3]
    ys, xs = np.mgrid[:h, :w].astype(np.float64)
    out = np.empty_like(images)
    for i, img in enumerate(images[..., 0].astype(np.float64)):
        total = img.sum()
        if total <= 0:
            out[i, ..., 0] = images[i, ..., 0]
            continue
        my, mx = (ys * img).sum() / total, (xs * img).sum() / total
        var_y = ((ys - my) ** 2 * img).sum() / total
        alpha = ((ys - my) * (xs - mx) * img).sum() / total / var_y if var_y > 0 else 0.0
        shear = np.array([[1.0, 0.0], [alpha, 1.0]])  # output (y, x) reads input (y, x + alpha (y - c))
        offset = np.array([my, mx]) - shear @ np.array([h / 2, w / 2])
        out[i, ..., 0] = ndimage.affine_transform(img, shear, offset=offset, order=1).clip(0, 255).round()
    return out


def hog_features(
    images: np.ndarray, orientations: int = 9, cells: int | list[int] = 4, block: int = 2, deskewed: bool = False
) -> np.ndarray:
    """Histogram of oriented gradients (scikit-image) of (N, H, W, C) uint8 images, L2-normalised.

    The image is cut into ``cells`` x ``cells`` cells (7x7-pixel cells for 28x28 MNIST, 8x8 for 32x32);
    a list of cell counts concatenates one HOG per scale, each of equal weight.  ``deskewed`` first
    straightens grayscale digits (:func:`deskew`).
    """
    if deskewed:
        images = deskew(images)
    h, w, c = images.shape[1:]
    scales = []
    for n in [cells] if isinstance(cells, int) else cells:
        args = {
            "orientations": orientations,
            "pixels_per_cell": (h // n, w // n),
            "cells_per_block": (min(block, n), min(block, n)),
            "feature_vector": True,
        }
        if c > 1:
            args["channel_axis"] = -1
        rows = [hog(img if c > 1 else img[..., 0], **args) for img in images]
        if not rows:
            return np.zeros((0, 0), np.float32)
        scales.append(l2_normalize(np.stack(rows)))
    return scales[0] if len(scales) == 1 else l2_normalize(np.concatenate(scales, axis=1))


def hog_encoder(images: np.ndarray, settings: dict) -> np.ndarray:
    """HOG features of uint8 images as an encoder's ``settings`` (kind ``hog``) configure them."""
    cells, deskewed = settings.get("cells", 4), settings.get("deskew", False)
    return hog_features(images, settings.get("orientations", 9), cells, deskewed=deskewed)


def embed_hog(*, settings: dict, images_path, out_npy) -> None:
    """HOG embeddings of a table's images, row i = row i of the table (a party's own table, or the public
    pool): the ``embed_party`` and ``embed_public`` jobs of a HOG encoder, which fit no model."""
    _, images, _ = read_images(images_path)
    save_npy(hog_encoder(images, settings), out_npy)
