"""Ingest: real offline files, their counts and polarity, and the errors for bad raw data."""

import gzip
import json
import pickle
import shutil

import numpy as np
import pandas as pd
import pytest

from pipelib.data import ingest
from pipelib.io import read_images


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, data_root):
    out = tmp_path_factory.mktemp("ingest")
    for name in ("mnist", "femnist_letters", "cifar100"):
        ingest.ingest(name, data_root, out / name)
    return out


def test_mnist_counts_match_data_readme(ingested):
    counts = pd.read_csv(ingested / "mnist" / "class_counts.csv")
    train = counts[counts.split == "train"].sort_values("label")["count"].tolist()
    assert train == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    frame, images, meta = read_images(ingested / "mnist" / "test.parquet")
    assert images.shape == (10000, 28, 28, 1) and images.dtype == np.uint8
    assert meta["shape"] == [28, 28, 1] and meta["polarity"] == "ink_high"
    assert (frame["index"] == np.arange(10000)).all()


def test_femnist_letters_writers_and_polarity(ingested):
    tr, im_tr, _ = read_images(ingested / "femnist_letters" / "train.parquet")
    te, im_te, _ = read_images(ingested / "femnist_letters" / "test.parquet")
    both = pd.concat([tr, te])
    assert len(both) == 4550 and both["writer"].nunique() == 517
    merged = both["label"].map({**{10 + i: i for i in range(6)}, **{36 + i: i for i in range(6)}})
    assert merged.value_counts().sort_index().tolist() == [798, 599, 727, 740, 1014, 672]
    # LEAF stores white background = 1.0; we store MNIST polarity: background 0, ink high
    border = np.concatenate([im_tr[:, 0], im_tr[:, -1]])
    assert np.median(border) == 0 and im_tr.max() == 255


def test_cifar100_labels(ingested):
    frame, images, meta = read_images(ingested / "cifar100" / "train.parquet")
    assert images.shape == (17000, 32, 32, 3)
    assert frame["fine_label"].nunique() == 34 and (frame["label"] == frame["fine_label"]).all()
    assert frame.groupby("coarse_label").size().loc[[0, 1, 2, 3, 4, 5]].tolist() == [2500] * 6
    assert meta["label_names"]["fine_label"][0] == "apple"


def test_missing_file_lists_expected_names_and_root(tmp_path):
    (tmp_path / "MNIST" / "raw").mkdir(parents=True)
    with pytest.raises(ingest.MissingDataError) as err:
        ingest.raw_files("mnist", tmp_path)
    msg = str(err.value)
    assert str(tmp_path) in msg and "4 of 4 raw files missing" in msg
    for name in ("train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        assert name in msg
    assert "download: true" in msg


def test_femnist_missing_says_no_download(tmp_path):
    with pytest.raises(ingest.MissingDataError, match="cannot be downloaded"):
        ingest.raw_files("femnist_letters", tmp_path)


def _copy_mnist(data_root, dest):
    shutil.copytree(data_root / "MNIST", dest / "MNIST")


def test_checksum_mismatch_names_the_file(tmp_path, data_root):
    _copy_mnist(data_root, tmp_path)
    bad = tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte.gz"
    raw = bytearray(bad.read_bytes())
    raw[-5] ^= 0xFF
    bad.write_bytes(bytes(raw))
    with pytest.raises(ingest.ChecksumError) as err:
        ingest.ingest("mnist", tmp_path, tmp_path / "out")
    assert "t10k-labels-idx1-ubyte.gz" in str(err.value) and "checksum mismatch" in str(err.value)
    assert not (tmp_path / "out" / "test.parquet").exists()


def test_a_truncated_raw_file_is_named_without_checksums(tmp_path, data_root):
    """verify_checksums: false and a cut raw MNIST file: a bare EOFError before; now the file is named."""
    _copy_mnist(data_root, tmp_path)
    cut = tmp_path / "MNIST" / "raw" / "t10k-images-idx3-ubyte.gz"
    cut.write_bytes(cut.read_bytes()[:5000])
    with pytest.raises(ValueError, match=rf"cannot read raw file {cut}: EOFError: .* damaged or truncated"):
        ingest.ingest("mnist", tmp_path, tmp_path / "out", verify=False)
    batch = tmp_path / "data_batch_1"
    batch.write_bytes(pickle.dumps({"data": [1, 2, 3]})[:10])
    with pytest.raises(ValueError, match=rf"cannot read raw file {batch}: UnpicklingError"):
        ingest._read_cifar([batch], ("labels",))


def test_leaf_shard_may_be_uncompressed(tmp_path, data_root):
    src = data_root / "FEMNIST" / "letters_af"
    for split in ("train", "test"):
        (tmp_path / "FEMNIST" / "letters_af" / split).mkdir(parents=True)
    shutil.copy(src / "test" / "all_data_letters_af_test.json.gz", tmp_path / "FEMNIST/letters_af/test/")
    with gzip.open(src / "train" / "all_data_letters_af_train.json.gz") as f:
        (tmp_path / "FEMNIST/letters_af/train/all_data_letters_af_train.json").write_bytes(f.read())
    files = ingest.raw_files("femnist_letters", tmp_path)
    assert any(str(p).endswith("train.json") for p in files.values())
    counts = ingest.ingest("femnist_letters", tmp_path, tmp_path / "out", verify=False)
    assert counts["count"].sum() == 4550


def test_official_cifar_layout_is_read_unchanged(tmp_path):
    """An official-format CIFAR-10 folder (extra 'filenames' key, bytes keys) reads the same way."""
    root = tmp_path / "cifar-10-batches-py"
    root.mkdir()
    rng = np.random.default_rng(0)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, size=(4, 3072), dtype=np.uint8)
        batch = {"batch_label": name, "labels": [0, 1, 2, 3], "data": data, "filenames": ["a.png"] * 4}
        with open(root / name, "wb") as f:
            pickle.dump(batch, f, protocol=2)
    with open(root / "batches.meta", "wb") as f:
        pickle.dump({"label_names": ["airplane"] * 10}, f, protocol=2)
    ingest.ingest("cifar10", tmp_path, tmp_path / "out", verify=False)
    frame, images, _ = read_images(tmp_path / "out" / "train.parquet")
    assert images.shape == (20, 32, 32, 3)
    with open(root / "data_batch_1", "rb") as f:
        first = pickle.load(f, encoding="latin1")["data"][0]
    assert (images[0][..., 0].reshape(-1) == first[:1024]).all()  # red plane first


def test_malformed_idx_is_rejected(tmp_path):
    img, lab = tmp_path / "i.gz", tmp_path / "l.gz"
    with gzip.open(img, "wb") as f:
        f.write(np.array([2051, 2, 2, 2], dtype=">u4").tobytes() + bytes(8))
    with gzip.open(lab, "wb") as f:
        f.write(np.array([2049, 3], dtype=">u4").tobytes() + bytes(3))
    with pytest.raises(ValueError, match="malformed IDX"):
        ingest._read_idx(img, lab)


def test_unknown_dataset():
    with pytest.raises(KeyError, match="known datasets"):
        ingest.dataset("svhn")


def test_leaf_checksum_registry_covers_every_offline_shard(data_root):
    known = json.loads((ingest.resources.files("pipelib.data") / "checksums.json").read_text())["md5"]
    on_disk = {p.relative_to(data_root).as_posix() for p in (data_root / "FEMNIST").rglob("*.json.gz")}
    assert on_disk <= set(known)
    assert len(ingest.dataset("femnist").splits["train"]) == 20
    assert len(ingest.dataset("femnist").splits["test"]) == 35


def test_files_given_through_links_are_checked_by_content(tmp_path, data_root):
    """The workflow hands ingest links named like the raw files: their md5 is still checked under the
    expected names, and a flipped byte behind a link fails naming it."""
    _copy_mnist(data_root, tmp_path)
    spec = ingest.dataset("mnist")
    links = {}
    for rel in spec.files():
        link = tmp_path / "view" / rel.rsplit("/", 1)[1]
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(tmp_path / rel)
        links[rel] = link
    assert ingest.verify_files(links) == ingest.verify_checksums([tmp_path / r for r in spec.files()], tmp_path)
    digest = ingest.content_digest("mnist", tmp_path)
    assert digest == ingest.content_digest("mnist", data_root)  # the same bytes, another folder
    bad = tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte.gz"
    raw = bytearray(bad.read_bytes())
    raw[-5] ^= 0xFF
    bad.write_bytes(bytes(raw))
    with pytest.raises(ingest.ChecksumError, match="t10k-labels-idx1-ubyte.gz"):
        ingest.ingest("mnist", None, tmp_path / "out", files=links)
    with pytest.raises(ingest.ChecksumError):
        ingest.content_digest("mnist", tmp_path)
