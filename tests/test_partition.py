"""Partition schemes on synthetic pools: disjointness, coverage, writer integrity, determinism."""

import numpy as np
import pandas as pd
import pytest

from pipelib.data import partition as P


def pool_frame(n=600, writers=40, classes=6, subs=5, seed=0):
    r = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "split": np.where(r.random(n) < 0.8, "train", "test"),
            "index": np.arange(n),
            "label": r.integers(0, classes, n).astype(np.int16),
            "fine_label": r.integers(0, subs, n),
            "writer": [f"w{w:03d}" for w in r.integers(0, writers, n)],
        }
    )


def check_disjoint_cover(parts, n):
    allrows = np.concatenate(parts)
    assert len(allrows) == len(set(allrows.tolist()))
    assert allrows.max() < n


@pytest.mark.parametrize(
    "scheme,extra",
    [("iid", {}), ("writer", {}), ("dirichlet", {"alpha": 0.5}), ("subclass", {"subclass_column": "fine_label"})],
)
def test_schemes_disjoint_and_deterministic(scheme, extra):
    f = pool_frame()
    sc = {"parties": 10, "scheme": scheme, **extra}  # 10 > 5 subclasses: shared subclasses are split at random
    a, b = P.deal(f, sc, seed=3), P.deal(f, sc, seed=3)
    check_disjoint_cover(a, len(f))
    assert all((x == y).all() for x, y in zip(a, b))
    c = P.deal(f, sc, seed=4)
    assert any(len(x) != len(y) or (x != y).any() for x, y in zip(a, c))


def test_iid_covers_everything_evenly():
    parts = P.deal(pool_frame(n=601), {"parties": 10, "scheme": "iid"}, seed=0)
    assert sorted(map(len, parts)) == [60] * 9 + [61]
    assert sum(map(len, parts)) == 601


def test_writer_scheme_keeps_writers_whole_and_balanced():
    f = pool_frame(n=2000, writers=120)
    parts = P.deal(f, {"parties": 6, "scheme": "writer"}, seed=0)
    owners = {}
    for p, rows in enumerate(parts):
        for w in f.iloc[rows]["writer"].unique():
            assert owners.setdefault(w, p) == p, "a writer was split across parties"
    assert sum(map(len, parts)) == 2000
    assert max(map(len, parts)) - min(map(len, parts)) <= f.groupby("writer").size().max()


def test_subclass_scheme_one_subclass_per_class_per_party():
    f = pool_frame(n=3000)
    parts = P.deal(f, {"parties": 10, "scheme": "subclass", "subclass_column": "fine_label"}, seed=0)
    for p, rows in enumerate(parts):
        g = f.iloc[rows]
        assert (g.groupby("label")["fine_label"].nunique() == 1).all()
        assert set(g["fine_label"]) == {p % 5}
    # parties p and p+5 share subclass p%5 and split it disjointly and fully
    both = np.concatenate([parts[0], parts[5]])
    assert len(both) == len(set(both)) == int((f["fine_label"] == 0).sum())


def test_dirichlet_small_alpha_skews_labels():
    f = pool_frame(n=3000)
    parts = P.deal(f, {"parties": 5, "scheme": "dirichlet", "alpha": 0.1}, seed=0)
    shares = [np.bincount(f.iloc[r]["label"], minlength=6) / len(r) for r in parts]
    assert max(s.max() for s in shares) > 0.5  # iid would be ~1/6


def test_errors_are_specific():
    f = pool_frame(n=50, writers=3)
    with pytest.raises(ValueError, match="3 writers cannot fill 5 parties"):
        P.deal(f, {"parties": 5, "scheme": "writer"}, seed=0)
    with pytest.raises(ValueError, match="no records"):
        P.deal(f.head(3), {"parties": 5, "scheme": "iid"}, seed=0)
    with pytest.raises(ValueError, match="unknown scheme"):
        P.deal(f, {"parties": 2, "scheme": "zipf"}, seed=0)


def test_relabel_and_task_records():
    frame = pd.DataFrame({"index": range(6), "label": [10, 36, 11, 37, 5, 12]})
    task = {"column": "label", "classes": [[10, 36], [11, 37]]}
    assert P.relabel(frame, task).tolist() == [0, 0, 1, 1, -1, -1]
    pool = P.task_records({"train": frame}, {"train": np.zeros((6, 2, 2, 1), np.uint8)}, task)
    assert pool.frame["label"].tolist() == [0, 0, 1, 1]
    assert pool.frame["source_label"].tolist() == [10, 36, 11, 37]
    assert P.task_classes({"classes": [3, [4, 5]]}) == [[3], [4, 5]]


def test_writer_holdout_is_writer_disjoint():
    f = pool_frame(n=1000, writers=50)
    pool = P.Pool(f, np.zeros((len(f), 1, 1, 1), np.uint8))
    test, rest = P.hold_out_test(pool, {"source": "writer_holdout", "fraction": 0.2}, seed=0)
    assert set(f.iloc[test]["writer"]).isdisjoint(f.iloc[rest]["writer"])
    assert 0.1 < len(test) / len(f) <= 0.2 + 1e-9
    t2, _ = P.hold_out_test(pool, {"source": "test_split"}, seed=0)
    assert (f.iloc[t2]["split"] == "test").all()


def test_partition_files_are_byte_identical_for_the_same_seed(tmp_path, data_root):
    """Same config and seed, same bytes: the dealer and a party extraction, run twice."""
    from pathlib import Path

    from pipelib.config import load
    from pipelib.data.ingest import ingest

    for name in ("femnist_letters", "mnist"):
        ingest(name, data_root, tmp_path / name)
    cfg = load(Path(__file__).resolve().parents[1] / "config.yaml")
    sc = cfg["scenarios"]["femnist_noniid"]
    files = {}
    for run, seed in (("a", 0), ("b", 0), ("c", 1)):
        out = {k: tmp_path / run / f"{k}.bin" for k in ("assignment", "public", "test", "summary")}
        P.make_partition(
            "femnist_noniid", sc, cfg["tasks"][sc["task"]], seed, tmp_path / "femnist_letters", tmp_path / "mnist", out
        )
        P.extract_party(out["assignment"], tmp_path / "femnist_letters", 2, tmp_path / run / "party.bin")
        files[run] = {p.name: p.read_bytes() for p in (tmp_path / run).iterdir()}
    assert files["a"] == files["b"]
    assert files["a"]["assignment.bin"] != files["c"]["assignment.bin"]


def test_split_range_test_set_and_public_rows_are_excluded_from_the_pool():
    """Paper 003's MNIST split: public = test[0:50], test = test[50:100], private = train only."""
    frame = pd.DataFrame(
        {
            "split": ["train"] * 200 + ["test"] * 100,
            "index": list(range(200)) + list(range(100)),
            "label": np.arange(300) % 10,
        }
    )
    pool = P.Pool(frame, np.zeros((300, 1, 1, 1), np.uint8))
    exclude = ((frame["split"] == "test") & (frame["index"] < 50)).to_numpy()
    test, private = P.hold_out_test(
        pool, {"source": "split_range", "split": "test", "start": 50, "stop": 100}, seed=0, exclude=exclude
    )
    assert (frame.iloc[test]["index"] >= 50).all() and len(test) == 50
    assert (frame.iloc[private]["split"] == "train").all() and len(private) == 200
    with pytest.raises(ValueError, match="overlaps the public rows"):
        P.hold_out_test(
            pool, {"source": "split_range", "split": "test", "start": 0, "stop": 60}, seed=0, exclude=exclude
        )


def test_public_rows_range(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"index": np.arange(10), "label": np.arange(10) % 3}), tmp_path / "test.parquet")
    rows = P.public_rows(tmp_path, {"split": "test", "start": 2, "stop": 5})
    assert rows["index"].tolist() == [2, 3, 4] and (rows["split"] == "test").all()
    with pytest.raises(ValueError, match="exceeds the 10 rows"):
        P.public_rows(tmp_path, {"split": "test", "stop": 11})
