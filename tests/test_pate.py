"""PATE in the distillation stage (issue 30): the teachers' votes -> the curator's GNMax -> the server's
aggregate and labels, on small files.  The mechanism against its closed form (the per-query Gaussian of
pipelib.privacy.pate, composed over the queries) and its draw against the release's key."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelib.io import read_table
from pipelib.job import Job
from pipelib.methods import distill
from pipelib.methods.pate import PateTeacher
from pipelib.privacy import pate, read_releases, registry
from pipelib.seeding import random_queries, release_rng, rng

RELEASE = {"scenario": "s", "teacher": "pate-T8-q5", "cmech": "gnmax-eps8.0"}


def test_gnmax_is_k_gaussian_answers_and_releases_only_the_noisy_argmax():
    mech = registry.parse("gnmax-eps8.0").calibrated(5, 1e-5)
    assert mech.sigma == pate.gnmax_sigma(8.0, 1e-5, 5)
    g = mech.guarantee(5)
    assert g == pate.guarantee(mech.sigma, 5, 1e-5) and g.epsilon <= 8.0 and g.epsilon == pytest.approx(8.0, rel=2e-3)
    votes = np.array([[0, 7, 1], [4, 0, 4], [2, 2, 4], [8, 0, 0], [1, 1, 6]], dtype=float)
    out = mech.release(votes, 5, rng(3))
    assert (out == np.eye(3)[pate.gnmax(votes, mech.sigma, rng(3))]).all()  # one-hot rows: the argmax only
    assert (out.sum(1) == 1).all() and set(np.unique(out)) == {0.0, 1.0}
    assert mech.extras() == {"sigma": mech.sigma}


def test_gnmax_refuses_a_release_it_was_not_calibrated_for():
    with pytest.raises(ValueError, match="needs a delta"):
        registry.parse("gnmax-eps8.0").calibrated(5, None)
    with pytest.raises(ValueError, match="call calibrated"):
        registry.parse("gnmax-eps8.0").guarantee(5)
    with pytest.raises(ValueError, match="not 6"):
        registry.parse("gnmax-eps8.0").calibrated(5, 1e-5).release(np.zeros((6, 3)), 6, rng(0))
    assert registry.parse("laplace-eps1.0").calibrated(5, None).name == "laplace"  # the others ignore it


def _stage(tmp_path, votes, eps=8.0, public_n=30):
    """Curate, aggregate and label PATE's votes for teacher pate-T8-q<queries>; returns the files."""
    q = len(votes)
    release = {**RELEASE, "teacher": f"pate-T8-q{q}", "cmech": f"gnmax-eps{eps!r}"}
    answers, info, public = tmp_path / "teachers.npy", tmp_path / "teachers.json", tmp_path / "public.parquet"
    np.save(answers, votes)
    info.write_text(json.dumps({"pool_records": 1200, "teachers": 8}))
    pq.write_table(pa.table({"x": np.arange(public_n)}), public)
    d = tmp_path / "gnmax"
    curated, guarantee = d / "curated.npy", d / "curated.guarantee.json"
    distill.curate(
        Job(
            rule="distill_curate",
            release=release,
            input={"answers": [str(answers)], "teachers_info": str(info)},
            output={"release": str(curated), "guarantee": str(guarantee)},
        ),
        delta=1e-5,
    )
    mech = release["cmech"]
    distill.aggregate(
        mechanism=mech,
        release_paths=[curated],
        guarantee_paths=[guarantee],
        out_counts=d / "c.npy",
        out_summary=d / "a.json",
    )
    distill.label(
        Job(
            seed=0,
            release={**release, "mech": mech},
            input={"counts": str(d / "c.npy"), "public": str(public)},
            output={"labels": str(d / "l.parquet")},
        )
    )
    return (
        release,
        read_releases(guarantee)[0],
        read_table(d / "l.parquet").to_pandas(),
        json.loads((d / "a.json").read_text()),
    )


def test_the_server_labels_the_queried_rows_with_the_curators_noisy_argmax(tmp_path):
    votes = rng(7).multinomial(8, [0.5, 0.3, 0.2], size=5).astype(float)  # 8 teachers' votes on 5 queries
    release, row, labels, summary = _stage(tmp_path, votes)
    sigma = pate.gnmax_sigma(8.0, 1e-5, 5)
    noise = release_rng(0, "seeded", "distill_curate", release).normal(0.0, sigma, size=votes.shape)
    assert labels["row"].tolist() == random_queries(np.arange(30), 5, rng(0, "pate-queries", "s", 5)).tolist()
    assert labels["label"].tolist() == (votes + noise).argmax(1).tolist()
    assert labels["cluster"].tolist() == list(range(5))
    # the record the row will carry: the pool's records, the teachers, 5 votes moved per record, sigma
    assert (row["n"], row["owners"], row["k"], row["sigma"], row["method"]) == (1200, 8, 5, sigma, "PATE")
    assert row["adjacency"] == "replace one record" and row["delta"] == 1e-5 and row["epsilon"] <= 8.0
    assert summary["records"] == 1200 and summary["guarantee"]["epsilon"] == row["epsilon"]


def test_with_negligible_noise_the_labels_are_the_teachers_plurality(tmp_path):
    votes = np.array([[0, 7, 1], [6, 0, 2], [2, 2, 4], [8, 0, 0]], dtype=float)
    _, row, labels, _ = _stage(tmp_path, votes, eps=1e6)
    assert row["sigma"] < 0.01 and labels["label"].tolist() == [1, 0, 2, 0]


def test_pate_teacher_record_and_query_draw():
    t = PateTeacher.parse("pate-parties-q40")
    assert (t.design, t.k, str(t)) == ("parties", 40, "pate-parties-q40")
    rows = t.query_rows(100, 0, "s")
    assert len(set(rows)) == 40 and (rows == t.query_rows(100, 0, "s")).all() and (np.diff(rows) > 0).all()
    assert not (rows == t.query_rows(100, 0, "other")).all()
    with pytest.raises(ValueError, match="40 queries but only 30"):
        t.query_rows(30, 0, "s")
