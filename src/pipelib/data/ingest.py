"""Ingest: raw dataset files -> one Parquet image table per split.

Reads the offline copies described in ``../shared/data/README.md`` and, unchanged, the official
files that torchvision downloads (same folder layout).  Every raw file is checked against the
md5 sums in ``checksums.json`` (the offline copy's and, for CIFAR, the official one).

All grayscale images are stored with MNIST polarity (0 = background, 255 = ink); LEAF/FEMNIST
stores the reverse as floats, so it is converted with ``round((1 - x) * 255)`` (exact for these
files, whose values are multiples of 1/255).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import pickle
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from .. import vocab
from ..io import atomic_path, image_table, write_csv, write_json, write_table

log = logging.getLogger(__name__)

SPLITS = vocab.SPLITS


class MissingDataError(FileNotFoundError):
    """A raw dataset file is not where the data root says it should be."""


class ChecksumError(ValueError):
    """A raw dataset file exists but its md5 sum is not one we know."""


def _checksums() -> dict[str, list[str]]:
    return json.loads(resources.files(__package__).joinpath("checksums.json").read_text())["md5"]


def _leaf_shards(prefix: str) -> tuple[str, ...]:
    """The LEAF shard files recorded in checksums.json under ``prefix`` (train/ or test/)."""
    names = [p[len("FEMNIST/data/") :] for p in _checksums() if p.startswith("FEMNIST/data/" + prefix)]
    shard = lambda name: int(name.split("_")[2])  # noqa: E731  all_data_<k>_niid_...
    return tuple(sorted((n for n in names if n.endswith(".json.gz")), key=shard))


@dataclass(frozen=True)
class RawDataset:
    """Where a dataset's raw files live under the data root, and how to read them."""

    name: str
    folder: str
    splits: dict[str, tuple[str, ...]]
    kind: str  # "idx", "cifar10", "cifar100" or "leaf"
    extra: tuple[str, ...] = ()  # files that are checked but not read (label names)
    torchvision: str | None = None  # torchvision class that can download it
    label_names: tuple[str, ...] = ()
    classes: int = 10  # size of the label column's class space (what a model's public outputs cover)

    def files(self) -> list[str]:
        """All raw files (relative to the data root) that this dataset needs."""
        rel = [f for split in SPLITS for f in self.splits[split]] + list(self.extra)
        return [f"{self.folder}/{f}" for f in rel]


_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}

DATASETS: dict[str, RawDataset] = {
    "mnist": RawDataset(
        "mnist", "MNIST/raw", _MNIST_FILES, "idx", torchvision="MNIST", label_names=tuple("0123456789")
    ),
    "fashion_mnist": RawDataset(
        "fashion_mnist",
        "FashionMNIST/raw",
        _MNIST_FILES,
        "idx",
        torchvision="FashionMNIST",
        label_names=(
            "T-shirt/top",
            "Trouser",
            "Pullover",
            "Dress",
            "Coat",
            "Sandal",
            "Shirt",
            "Sneaker",
            "Bag",
            "Ankle boot",
        ),
    ),
    "cifar10": RawDataset(
        "cifar10",
        "cifar-10-batches-py",
        {"train": tuple(f"data_batch_{i}" for i in range(1, 6)), "test": ("test_batch",)},
        "cifar10",
        extra=("batches.meta",),
        torchvision="CIFAR10",
        label_names=("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"),
    ),
    "cifar100": RawDataset(
        "cifar100",
        "cifar-100-python",
        {"train": ("train",), "test": ("test",)},
        "cifar100",
        extra=("meta",),
        torchvision="CIFAR100",
        classes=100,
    ),
    "femnist": RawDataset(
        "femnist", "FEMNIST/data", {"train": _leaf_shards("train/"), "test": _leaf_shards("test/")}, "leaf", classes=62
    ),
    "femnist_letters": RawDataset(
        "femnist_letters",
        "FEMNIST/letters_af",
        {"train": ("train/all_data_letters_af_train.json.gz",), "test": ("test/all_data_letters_af_test.json.gz",)},
        "leaf",
        classes=62,
    ),
}
assert tuple(DATASETS) == vocab.DATASETS, "vocab.DATASETS must list the datasets defined here"


def dataset(name: str) -> RawDataset:
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known datasets: {', '.join(DATASETS)}") from None


def _resolve(root: Path, rel: str) -> Path | None:
    """The file for ``rel`` under ``root``; a LEAF shard may also be stored uncompressed (.json)."""
    path = root / rel
    if path.is_file():
        return path
    if rel.endswith(".json.gz") and (root / rel[:-3]).is_file():
        return root / rel[:-3]
    return None


def raw_files(name: str, data_root) -> dict[str, Path]:
    """Locate every raw file of dataset ``name`` under ``data_root``: {expected relative path: file}.

    Raises MissingDataError listing the expected files and the data root searched.
    """
    spec, root = dataset(name), Path(data_root)
    found, missing = {}, []
    for rel in spec.files():
        path = _resolve(root, rel)
        if path:
            found[rel] = path
        else:
            missing.append(rel)
    if missing:
        hint = (
            f"set download: true to fetch it with torchvision.datasets.{spec.torchvision}"
            if spec.torchvision
            else "it cannot be downloaded automatically; see ../shared/data/README.md"
        )
        listing = "\n  ".join(missing)
        raise MissingDataError(
            f"dataset {name!r}: {len(missing)} of {len(spec.files())} raw files missing under data root "
            f"{root.resolve()} (config key data_root={str(data_root)!r}).\nExpected files:\n  {listing}\n"
            f"Point data_root at the folder that holds {spec.folder}/, or {hint}."
        )
    return found


def md5sum(path, chunk: int = 1 << 20) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


class Md5Cache:
    """md5 sums of raw files, remembered by (path, size, modification time) in a JSON file, so that a
    workflow can check every raw file's content before any job runs without re-reading unchanged files."""

    def __init__(self, path=None):
        self.path = Path(path) if path else None
        self.known = {}
        if self.path and self.path.is_file():
            try:
                self.known = json.loads(self.path.read_text())
            except ValueError:
                self.known = {}
        self.changed = False

    def md5(self, file) -> str:
        st = Path(file).stat()
        key = f"{Path(file).resolve()}|{st.st_size}|{st.st_mtime_ns}"
        if key not in self.known:
            self.known[key] = md5sum(file)
            self.changed = True
        return self.known[key]

    def save(self) -> None:
        if self.path and self.changed:
            with atomic_path(self.path) as tmp:
                tmp.write_text(json.dumps(self.known, indent=0, sort_keys=True))
            self.changed = False


def _actual_rel(rel: str, path) -> str:
    """The relative name of the file found for ``rel``: a LEAF shard may be stored uncompressed (``.json``
    for ``.json.gz``); ``path`` may be a link named like the file it points to."""
    return rel[:-3] if rel.endswith(".json.gz") and Path(path).name == Path(rel).name[:-3] else rel


def verify_files(files: dict, cache: Md5Cache | None = None) -> dict[str, str]:
    """Check the md5 of each raw file (``files``: expected relative path -> file) against checksums.json;
    returns {relative path: md5}.  Raises ChecksumError naming the first file whose md5 is not a known
    one; a file with no recorded checksum is accepted with a warning."""
    known, seen, cache = _checksums(), {}, cache or Md5Cache()
    for expected, path in files.items():
        rel = _actual_rel(expected, path)
        got = cache.md5(path)
        seen[rel] = got
        if rel not in known:
            log.warning("no recorded checksum for %s (md5 %s); accepted unchecked", rel, got)
        elif got not in known[rel]:
            raise ChecksumError(
                f"checksum mismatch for {path}: md5 {got}, expected {' or '.join(known[rel])}. "
                f"The file is corrupt or not the version this pipeline knows; re-copy it "
                f"(or set verify_checksums: false at your own risk)."
            )
    return seen


def verify_checksums(paths: list[Path], data_root) -> dict[str, str]:
    """Check each file (under ``data_root``) against checksums.json; see :func:`verify_files`."""
    root = Path(data_root).resolve()
    return verify_files({Path(p).resolve().relative_to(root).as_posix(): p for p in paths})


def content_digest(name: str, data_root, verify: bool = True, cache: Md5Cache | None = None) -> str:
    """A digest of the content of dataset ``name``'s raw files: the same bytes anywhere give the same
    digest, so a copy of the data root elsewhere re-runs nothing.  With ``verify``, a file whose md5
    is not a known one raises ChecksumError here, before any job could overwrite good outputs."""
    files = raw_files(name, data_root)
    cache = cache or Md5Cache()
    md5s = verify_files(files, cache) if verify else {_actual_rel(r, p): cache.md5(p) for r, p in files.items()}
    return hashlib.sha256(json.dumps(sorted(md5s.items())).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------- readers


def _raw(path: Path, read):
    """``read()`` of one raw file; any failure but a missing file names the file (a truncated gzip raises
    a bare EOFError, a cut pickle an UnpicklingError)."""
    try:
        return read()
    except FileNotFoundError:
        raise
    except Exception as err:
        raise ValueError(
            f"cannot read raw file {path}: {type(err).__name__}: {err}. It is damaged or truncated: restore it "
            f"(with verify_checksums: true every raw file is checked against its md5 before any job)"
        ) from None


def _unpickle(path: Path):
    with open(path, "rb") as f:
        return pickle.load(f, encoding="latin1")


def _json(path: Path):
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as f:
        return json.load(f)


def _read_idx(images_path: Path, labels_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Read an IDX image/label pair (gzip or plain) into (N, H, W, 1) uint8 images and labels."""

    def raw(p):
        def read():
            with gzip.open(p) if p.suffix == ".gz" else open(p, "rb") as f:
                return f.read()

        return _raw(p, read)

    img, lab = raw(images_path), raw(labels_path)
    magic, n, rows, cols = np.frombuffer(img[:16], dtype=">u4")
    lmagic, ln = np.frombuffer(lab[:8], dtype=">u4")
    if magic != 2051 or lmagic != 2049 or n != ln or len(img) != 16 + n * rows * cols or len(lab) != 8 + ln:
        raise ValueError(
            f"malformed IDX pair {images_path.name} / {labels_path.name}: magic {magic}/{lmagic}, counts {n}/{ln}"
        )
    images = np.frombuffer(img, dtype=np.uint8, offset=16).reshape(n, rows, cols, 1)
    return images, np.frombuffer(lab, dtype=np.uint8, offset=8).astype(np.int16)


def _read_cifar(paths: list[Path], label_keys: tuple[str, ...]) -> tuple[np.ndarray, dict]:
    """Read CIFAR python-version pickles into (N, 32, 32, 3) uint8 images and label columns."""
    data, labels = [], {k: [] for k in label_keys}
    for path in paths:
        d = _raw(path, lambda path=path: _unpickle(path))
        data.append(np.asarray(d["data"], dtype=np.uint8))
        for k in label_keys:
            labels[k].extend(d[k])
    flat = np.concatenate(data)
    images = flat.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), {k: np.asarray(v, dtype=np.int16) for k, v in labels.items()}


def _read_leaf(paths: list[Path]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Read LEAF FEMNIST JSON shards into (N, 28, 28, 1) uint8 images (ink high), labels, writers."""
    xs, ys, writers = [], [], []
    for path in paths:
        shard = _raw(path, lambda path=path: _json(path))
        for user in shard["users"]:
            ud = shard["user_data"][user]
            if len(ud["x"]) != len(ud["y"]):
                raise ValueError(f"{path}: writer {user} has {len(ud['x'])} images but {len(ud['y'])} labels")
            xs.append(np.asarray(ud["x"], dtype=np.float64).reshape(-1, 28, 28, 1))
            ys.extend(ud["y"])
            writers.extend([user] * len(ud["y"]))
    x = np.concatenate(xs) if xs else np.zeros((0, 28, 28, 1))
    images = np.rint((1.0 - x) * 255.0).clip(0, 255).astype(np.uint8)
    return images, np.asarray(ys, dtype=np.int16), writers


def read_split(name: str, split: str, paths: dict[str, Path]) -> tuple[dict, np.ndarray]:
    """Read one split of a dataset; returns (metadata columns, images)."""
    spec = dataset(name)
    files = [paths[f"{spec.folder}/{f}"] for f in spec.splits[split]]
    if spec.kind == "idx":
        images, labels = _read_idx(*files)
        cols = {"label": labels}
    elif spec.kind == "cifar10":
        images, lab = _read_cifar(files, ("labels",))
        cols = {"label": lab["labels"]}
    elif spec.kind == "cifar100":
        images, lab = _read_cifar(files, ("fine_labels", "coarse_labels"))
        cols = {"label": lab["fine_labels"], "fine_label": lab["fine_labels"], "coarse_label": lab["coarse_labels"]}
    elif spec.kind == "leaf":
        images, labels, writers = _read_leaf(files)
        cols = {"label": labels, "writer": writers}
    else:  # pragma: no cover - guarded by DATASETS
        raise ValueError(spec.kind)
    return {"index": np.arange(len(images), dtype=np.int32), **cols}, images


def _label_names(name: str, paths: dict[str, Path]) -> dict:
    spec = dataset(name)
    if spec.kind == "cifar100":
        with open(paths[f"{spec.folder}/meta"], "rb") as f:
            meta = pickle.load(f, encoding="latin1")
        return {"fine_label": meta["fine_label_names"], "coarse_label": meta["coarse_label_names"]}
    if spec.kind == "leaf":
        chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        return {"label": list(chars)}
    return {"label": list(spec.label_names)}


def ingest(name: str, data_root, out_dir, verify: bool = True, files: dict | None = None) -> pd.DataFrame:
    """Ingest dataset ``name`` into ``out_dir/{train,test}.parquet`` and ``out_dir/class_counts.csv``.

    ``files`` (expected relative path -> file) names the raw files directly; without it they are looked
    up under ``data_root``.  Returns the per-split, per-class counts that it also writes.
    """
    by_rel = {rel: Path(p) for rel, p in (files if files is not None else raw_files(name, data_root)).items()}
    md5s = verify_files(by_rel) if verify else {}
    out_dir = Path(out_dir)
    names = _label_names(name, by_rel)
    first_rel, first = next(iter(by_rel.items()))
    root = str(Path(first).resolve())[: -len(_actual_rel(first_rel, first))].rstrip("/")
    counts, summary = [], {"dataset": name, "data_root": root, "md5": md5s, "splits": {}}
    for split in SPLITS:
        cols, images = read_split(name, split, by_rel)
        meta = {
            "dataset": name,
            "split": split,
            "polarity": "ink_high" if images.shape[-1] == 1 else "rgb",
            "label_names": names,
        }
        write_table(image_table(cols, images, meta), out_dir / f"{split}.parquet")
        label_col = "coarse_label" if "coarse_label" in cols else None
        frame = pd.DataFrame({"label": cols["label"]})
        if label_col:
            frame["coarse_label"] = cols[label_col]
        c = frame.value_counts().rename("count").reset_index()
        c.insert(0, "split", split)
        counts.append(c)
        summary["splits"][split] = {
            "images": len(images),
            "shape": list(images.shape[1:]),
            "classes": int(frame["label"].nunique()),
        }
        if "writer" in cols:
            summary["splits"][split]["writers"] = len(set(cols["writer"]))
        log.info("%s/%s: %d images %s", name, split, len(images), images.shape[1:])
    table = pd.concat(counts, ignore_index=True).sort_values(["split", "label"], kind="stable")
    write_csv(table, out_dir / "class_counts.csv")
    write_json(summary, out_dir / "summary.json")
    return table
