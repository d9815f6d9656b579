"""Per-party NFDP sampling stage and the atomic image-table I/O it relies on."""

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from pipelib.io import atomic_path, image_table, read_images, write_table
from pipelib.methods.nfdp import sample_party, write_ledger
from pipelib.privacy.nfdp import nfdp


@pytest.fixture
def party_file(tmp_path):
    n = 40
    images = np.random.default_rng(0).integers(0, 256, (n, 4, 4, 1), dtype=np.uint8)
    cols = {"split": ["train"] * n, "index": np.arange(n, dtype=np.int32), "label": np.arange(n) % 3}
    path = tmp_path / "party-0.parquet"
    write_table(image_table(cols, images, {"scenario": "s", "role": "party"}), path)
    return path


def run(party_file, tmp_path, sampling, k, seed=0, tag="a"):
    out = {"sample": tmp_path / f"{tag}.parquet", "ledger": tmp_path / f"{tag}.json"}
    row = sample_party(party_file, {"scenario": "s", "sampling": sampling, "k": k, "party": 0}, seed, out)
    return pq.read_table(out["sample"]).to_pandas(), row


@pytest.mark.parametrize("sampling", ["with_replacement", "without_replacement"])
def test_same_seed_same_sample(party_file, tmp_path, sampling):
    a, row = run(party_file, tmp_path, sampling, 12, tag="a")
    b, _ = run(party_file, tmp_path, sampling, 12, tag="b")
    pd.testing.assert_frame_equal(a, b)
    c, _ = run(party_file, tmp_path, sampling, 12, seed=1, tag="c")
    assert not a["index"].equals(c["index"])
    g = nfdp(40, 12, sampling)
    assert (row["epsilon"], row["delta"], row["n"], row["k"]) == (g.epsilon, g.delta, 40, 12)


def test_sample_rows_carry_their_pixels(party_file, tmp_path):
    frame, images, _ = read_images(party_file)
    a, _ = run(party_file, tmp_path, "with_replacement", 30)
    _, sample_images, meta = read_images(tmp_path / "a.parquet")
    assert (sample_images == images[a["index"].to_numpy()]).all()
    assert meta["k"] == 30 and meta["n"] == 40 and meta["sampling"] == "with_replacement"


def test_ledger_columns_and_order(party_file, tmp_path):
    _, _ = run(party_file, tmp_path, "without_replacement", 5, tag="p0")
    ledger = write_ledger([tmp_path / "p0.json"], tmp_path / "ledger.csv")
    from pipelib.privacy import LEDGER_COLUMNS

    assert list(ledger.columns) == [c for c in LEDGER_COLUMNS if c in ledger]  # the ledger's column order
    assert ledger.loc[0, "randomness"] == "seeded" and "rule" in ledger.loc[0, "release_key"]
    assert ledger.loc[0, "n"] == 40 and ledger.loc[0, "k"] == 5 and ledger.loc[0, "sampling"] == "without_replacement"


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert not target.exists() and list(tmp_path.iterdir()) == []
    with atomic_path(target) as tmp:
        tmp.write_text("whole")
    assert target.read_text() == "whole" and oct(target.stat().st_mode & 0o777) != "0o600"
