"""Partition: split a private dataset into a held-out test set and N parties' private sets.

A scenario names a public dataset, a private dataset, a *task* (which private records take part
and how their labels map to task classes 0..C-1), a *test* rule and a *scheme* that deals the
remaining pool to the parties:

* ``iid``       shuffle the pool and cut it into N near-equal parts;
* ``writer``    whole writers per party (no writer is split), balanced by record count;
* ``subclass``  party i holds subclass (i mod s) of every task class, where a task class has s
                subclasses (CIFAR-100: a superclass and its fine classes); parties that share a
                subclass split its records disjointly;
* ``dirichlet`` label skew: each class is divided among parties by proportions ~ Dir(alpha).

This module only decides *who holds what*; the dealer job writes one self-contained table per
party, so that every later party job reads its own file and nothing else.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from ..io import META_KEY, image_table, read_images, read_table, table_meta, write_json, write_table
from ..seeding import rng
from ..vocab import SCHEMES, SPLITS, TEST_SOURCES


@dataclass
class Pool:
    """Candidate records of a task: metadata frame (one row per record) and their images."""

    frame: pd.DataFrame
    images: np.ndarray


def task_classes(task: dict) -> list[list[int]]:
    """A task's classes as lists of source label values (a bare int means a one-value class)."""
    return [c if isinstance(c, list) else [c] for c in task["classes"]]


def relabel(frame: pd.DataFrame, task: dict) -> pd.Series:
    """Task label of every row (-1 where the row is not part of the task)."""
    column = task["column"]
    if column not in frame.columns:
        raise ValueError(f"task column {column!r} is not in the dataset (columns: {', '.join(frame.columns)})")
    mapping = {v: i for i, values in enumerate(task_classes(task)) for v in values}
    return frame[column].map(mapping).fillna(-1).astype(np.int16)


def task_records(split_frames: dict[str, pd.DataFrame], split_images: dict[str, np.ndarray], task: dict) -> Pool:
    """All records of the given splits that belong to the task, relabelled to task classes."""
    frames, images = [], []
    for split, frame in split_frames.items():
        label = relabel(frame, task)
        keep = np.flatnonzero(label.to_numpy() >= 0)
        f = frame.iloc[keep].rename(columns={"label": "source_label"}).reset_index(drop=True)
        f.insert(0, "split", split)
        f.insert(2, "label", label.to_numpy()[keep])
        frames.append(f)
        images.append(split_images[split][keep])
    return Pool(pd.concat(frames, ignore_index=True), np.concatenate(images))


def hold_out_test(
    pool: Pool, test: dict, seed: int, exclude: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Split pool rows into (test rows, private rows) by the scenario's test rule.

    ``test_split``: the test split is the test set, the train split the private pool;
    ``split_range``: rows [start, stop) of one split are the test set, the train split the private pool;
    ``writer_holdout``: whole writers (about ``fraction`` of the records) are the test set, the rest of
    both splits the private pool.  Rows flagged in ``exclude`` (public rows of the same dataset) are in neither.
    """
    source = test["source"]
    n = len(pool.frame)
    split = pool.frame["split"].to_numpy()
    private = split == "train"
    if source == "test_split":
        is_test = split == "test"
    elif source == "split_range":
        index = pool.frame["index"].to_numpy()
        is_test = (split == test["split"]) & (index >= test.get("start", 0)) & (index < test.get("stop", np.inf))
    elif source == "writer_holdout":
        if "writer" not in pool.frame:
            raise ValueError("test source writer_holdout needs a dataset with writer ids (FEMNIST)")
        sizes = pool.frame.groupby("writer", sort=True).size()
        order = sizes.index.to_numpy()[rng(seed, "test-writers").permutation(len(sizes))]
        taken = np.cumsum(sizes.loc[order].to_numpy()) <= math.ceil(test["fraction"] * n)
        is_test = pool.frame["writer"].isin(set(order[taken])).to_numpy()
        private = np.ones(n, dtype=bool)
    else:
        raise ValueError(f"unknown test source {source!r}; allowed: {', '.join(TEST_SOURCES)}")
    if exclude is not None:
        if (is_test & exclude).any():
            raise ValueError("the test set overlaps the public rows; choose disjoint ranges")
        private &= ~exclude
    return np.flatnonzero(is_test), np.flatnonzero(private & ~is_test)


def deal(frame: pd.DataFrame, scenario: dict, seed: int) -> list[np.ndarray]:
    """Deal the rows of ``frame`` (the private pool) to ``scenario['parties']`` parties.

    Returns one array of row positions per party; parties never share a row.
    """
    n_parties, scheme = scenario["parties"], scenario["scheme"]
    r = rng(seed, "deal", scheme)
    if scheme == "iid":
        parts = np.array_split(r.permutation(len(frame)), n_parties)
    elif scheme == "writer":
        parts = _by_writer(frame, n_parties, r)
    elif scheme == "subclass":
        parts = _by_subclass(frame, scenario["subclass_column"], n_parties, r)
    elif scheme == "dirichlet":
        parts = _by_dirichlet(
            frame["label"].to_numpy(), n_parties, scenario["alpha"], scenario.get("min_records", 1), r
        )
    else:
        raise ValueError(f"unknown scheme {scheme!r}; allowed: {', '.join(SCHEMES)}")
    parts = [np.sort(np.asarray(p, dtype=np.int64)) for p in parts]
    empty = [i for i, p in enumerate(parts) if len(p) == 0]
    if empty:
        raise ValueError(
            f"scheme {scheme!r} left parties {empty} with no records "
            f"({len(frame)} records for {n_parties} parties); use fewer parties"
        )
    return parts


def _by_writer(frame, n_parties, r):
    """Largest writers first (random tie order), each to the party holding fewest records so far."""
    if "writer" not in frame:
        raise ValueError("scheme 'writer' needs a dataset with writer ids (FEMNIST)")
    sizes = frame.groupby("writer", sort=True).size()
    if len(sizes) < n_parties:
        raise ValueError(f"scheme 'writer': {len(sizes)} writers cannot fill {n_parties} parties")
    tie = r.permutation(len(sizes))
    order = np.lexsort((tie, -sizes.to_numpy()))
    loads, owner = np.zeros(n_parties, dtype=np.int64), {}
    for w in order:
        p = int(np.argmin(loads))
        owner[sizes.index[w]] = p
        loads[p] += sizes.iloc[w]
    who = frame["writer"].map(owner).to_numpy()
    return [np.flatnonzero(who == p) for p in range(n_parties)]


def _by_subclass(frame, column, n_parties, r):
    if column not in frame:
        raise ValueError(f"scheme 'subclass': column {column!r} not in the dataset")
    parts = [[] for _ in range(n_parties)]
    for label in sorted(frame["label"].unique()):
        subs = sorted(frame.loc[frame["label"] == label, column].unique())
        holders = {s: [p for p in range(n_parties) if subs[p % len(subs)] == s] for s in subs}
        for s, ps in holders.items():
            if not ps:
                continue  # fewer parties than subclasses: this subclass is left unused
            rows = r.permutation(np.flatnonzero(((frame["label"] == label) & (frame[column] == s)).to_numpy()))
            for p, chunk in zip(ps, np.array_split(rows, len(ps))):
                parts[p].extend(chunk.tolist())
    return parts


def _by_dirichlet(labels, n_parties, alpha, min_records, r, attempts=1000):
    for _ in range(attempts):
        parts = [[] for _ in range(n_parties)]
        for c in np.unique(labels):
            rows = r.permutation(np.flatnonzero(labels == c))
            cuts = (np.cumsum(r.dirichlet(np.full(n_parties, alpha)))[:-1] * len(rows)).astype(int)
            for p, chunk in enumerate(np.split(rows, cuts)):
                parts[p].extend(chunk.tolist())
        if min(map(len, parts)) >= min_records:
            return parts
    raise ValueError(
        f"dirichlet(alpha={alpha}) gave some party fewer than {min_records} records in "
        f"{attempts} draws; raise alpha or lower min_records"
    )


def summarize(frame: pd.DataFrame, test_rows: np.ndarray, parts: list[np.ndarray], n_classes: int) -> dict:
    """Counts per role and per party (records, classes, writers) for the partition's summary.json."""

    def describe(rows):
        f = frame.iloc[rows]
        d = {"n": int(len(rows)), "class_counts": np.bincount(f["label"].to_numpy(), minlength=n_classes).tolist()}
        if "writer" in f:
            d["writers"] = int(f["writer"].nunique())
        return d

    sizes = [len(p) for p in parts]
    return {
        "test": describe(test_rows),
        "parties_detail": [describe(p) for p in parts],
        "party_n": sizes,
        "party_n_min": int(min(sizes)),
        "party_n_max": int(max(sizes)),
    }


# ----------------------------------------------------------------------------- stage entry points


def _read_splits(data_dir) -> tuple[dict, dict, dict]:

    frames, images, meta = {}, {}, {}
    for split in SPLITS:
        frames[split], images[split], meta = read_images(f"{data_dir}/{split}.parquet")
    return frames, images, meta


def make_partition(name: str, scenario: dict, task: dict, seed: int, private_dir, public_dir, out: dict) -> dict:
    """The dealer job: decide test/party membership for a scenario and write its shared tables.

    ``out`` names the outputs: ``assignment`` (who holds which record; indices only),
    ``test`` (held-out test set with pixels), ``public`` (the public pool with pixels: the only image
    table of the scenario's public data the server's jobs read, so that they never open a table that
    also holds private records) and ``summary`` (JSON counts).  Party tables are written by
    :func:`extract_party`.
    """

    frames, images, meta = _read_splits(private_dir)
    pool = task_records(frames, images, task)
    rows_spec = scenario.get("public_rows", {"split": "train"})
    public = public_rows(public_dir, rows_spec)
    exclude = None
    if scenario["public"] == scenario["private"]:  # e.g. MNIST public = test[0:5000]: never private or test
        keys = set(zip(public["split"], public["index"]))
        exclude = np.array([(s, i) in keys for s, i in zip(pool.frame["split"], pool.frame["index"])])
    test_rows, private_rows = hold_out_test(pool, scenario["test"], seed, exclude)
    limit = scenario.get("pool_limit", 0)
    if 0 < limit < len(private_rows):  # a seeded subset of the private pool (small presets)
        private_rows = np.sort(rng(seed, "pool-limit").choice(private_rows, limit, replace=False))
    parts = [private_rows[p] for p in deal(pool.frame.iloc[private_rows].reset_index(drop=True), scenario, seed)]
    n_classes = len(task_classes(task))
    names = task.get("names") or [str(i) for i in range(n_classes)]
    common = {"scenario": name, "dataset": scenario["private"], "task_classes": names, "seed": seed}

    owner = np.full(len(pool.frame), -2, dtype=np.int32)  # -2 unused, -1 test, >= 0 party
    owner[test_rows] = -1
    for p, rows in enumerate(parts):
        owner[rows] = p
    labels = pool.frame["label"].to_numpy().copy()
    audit = scenario.get("audit")
    if audit:  # an audit variant: canaries from the test rows join party 0 (the audit's inputs)
        canaries = draw_canaries(pool.frame.iloc[test_rows], audit["canaries"], n_classes, seed)
        at = test_rows[canaries["row"]]
        test_rows = np.setdiff1d(test_rows, at)
        joined = canaries["included"] | (audit["adjacency"] == "replace")
        owner[at] = np.where(joined, 0, -3)  # -3: a canary left out (add/remove)
        labels[at] = np.where(canaries["included"], canaries["canary_label"], labels[at])
        frame = (
            pool.frame.iloc[at]
            .reset_index(drop=True)
            .assign(canary_label=canaries["canary_label"], included=canaries["included"])
        )
        meta = {**common, "role": "canaries", "party": 0, "adjacency": audit["adjacency"]}
        write_table(
            image_table({c: frame[c].to_numpy() for c in frame.columns}, pool.images[at], meta),
            out["canaries"],
        )
    assignment = pool.frame[["split", "index"]].assign(label=labels, party=owner)
    write_table(_plain_table(assignment, {**common, "role": "assignment"}), out["assignment"])

    test = pool.frame.iloc[test_rows]
    write_table(
        image_table(
            {c: test[c].to_numpy() for c in test.columns},
            pool.images[test_rows],
            {**common, "role": "test", "polarity": meta.get("polarity")},
        ),
        out["test"],
    )

    source = f"{public_dir}/{rows_spec['split']}.parquet"  # (an empty pool: a method without public data)
    _, public_images, public_meta = read_images(source)
    write_table(
        image_table(
            {c: public[c].to_numpy() for c in public.columns},
            public_images[public["index"].to_numpy()],  # ingest writes index == row position
            {
                "scenario": name,
                "dataset": scenario["public"],
                "role": "public",
                "source": source,
                "polarity": public_meta.get("polarity"),
            },
        ),
        out["public"],
    )

    summary = {
        "scenario": name,
        **{k: v for k, v in scenario.items() if k != "nfdp"},
        "seed": seed,
        "task_classes": names,
        "public_n": len(public),
        "pool_n": int(len(pool.frame)),
        **summarize(pool.frame, test_rows, parts, n_classes),
    }
    if audit:
        summary["canaries"] = {"count": audit["canaries"], "joined_party_0": int(joined.sum())}
    write_json(summary, out["summary"])
    return summary


def draw_canaries(test: pd.DataFrame, m: int, n_classes: int, seed: int) -> dict:
    """The audit's m canaries: test records (positions ``row`` in ``test``), each with a wrong label
    drawn uniformly (``canary_label``) and included in party 0 with probability 1/2 (``included``)."""
    if m > len(test):
        raise ValueError(f"audit.canaries = {m} exceeds the scenario's {len(test)} test records")
    r = rng(seed, "audit-canaries")
    row = np.sort(r.choice(len(test), m, replace=False))
    true = test["label"].to_numpy()[row].astype(np.int64)
    wrong = (true + 1 + r.integers(0, n_classes - 1, m)) % n_classes
    return {"row": row, "canary_label": wrong.astype(true.dtype), "included": r.random(m) < 0.5}


def public_rows(public_dir, spec: dict) -> pd.DataFrame:
    """The public pool: rows [start, stop) of one split of the public dataset (split, index, label)."""

    frame = read_table(f"{public_dir}/{spec['split']}.parquet", columns=["index", "label"]).to_pandas()
    stop = spec.get("stop", len(frame))
    if stop > len(frame):
        raise ValueError(f"public_rows stop={stop} exceeds the {len(frame)} rows of the {spec['split']} split")
    frame = frame.iloc[spec.get("start", 0) : stop].reset_index(drop=True)
    frame.insert(0, "split", spec["split"])
    return frame


def _plain_table(frame: pd.DataFrame, meta: dict):

    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True).encode()})


def extract_party(assignment_path, private_dir, party: int, out_path) -> int:
    """Write party ``party``'s private records (with pixels) as its own table; returns its n."""

    meta = table_meta(assignment_path)
    assignment = read_table(assignment_path).to_pandas()
    mine = assignment[assignment["party"] == party]
    if mine.empty:
        raise ValueError(f"scenario {meta['scenario']!r} has no party {party}")
    frames, images, data_meta = _read_splits(private_dir)
    frame, pixels = _gather(mine, frames, images)
    write_table(
        image_table(
            {c: frame[c].to_numpy() for c in frame.columns},
            pixels,
            {**meta, "role": "party", "party": party, "polarity": data_meta.get("polarity")},
        ),
        out_path,
    )
    return len(frame)


def _gather(mine: pd.DataFrame, frames: dict, images: dict) -> tuple[pd.DataFrame, np.ndarray]:
    """The records of assignment rows ``mine``: their frame (task label in ``label``) and pixels."""
    cols, parts = [], []
    for split, rows in mine.groupby("split", sort=False):
        at = rows["index"].to_numpy()  # ingest writes index == row position
        f = frames[split].iloc[at].reset_index(drop=True).rename(columns={"label": "source_label"})
        f.insert(0, "split", split)
        f.insert(2, "label", rows["label"].to_numpy())
        cols.append(f)
        parts.append(images[split][at])
    return pd.concat(cols, ignore_index=True), np.concatenate(parts)


def every_party(assignment_path, private_dir) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every party's records as (images NHWC uint8, task labels), in party order, for a job that runs all
    parties (LDP-FL's clients: hundreds, too many for a job each) and keeps them apart in code."""
    assignment = read_table(assignment_path).to_pandas()
    frames, images, _ = _read_splits(private_dir)
    out = []
    for party in range(int(assignment["party"].max()) + 1):
        frame, pixels = _gather(assignment[assignment["party"] == party], frames, images)
        out.append((pixels, frame["label"].to_numpy().astype(np.int64)))
    return out
