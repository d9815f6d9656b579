"""The one-run privacy audit: the bound against its closed forms and by simulation on mechanisms of
known epsilon, the canaries a scenario variant deals, and the auditor's count scores."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pipelib.audit import counts_scores
from pipelib.data import partition as P
from pipelib.privacy.audit import audit, epsilon_lower_bound, guesses, p_value, randomized_response


def test_p_value_without_delta_is_the_binomial_tail():
    q = math.exp(1.0) / (1 + math.exp(1.0))
    assert p_value(1000, 100, 80, 1.0, 0.0) == pytest.approx(stats.binom.sf(79, 100, q))


def test_delta_adds_its_term_and_p_rises_with_epsilon():
    """A larger claimed epsilon explains more correct guesses: the test rejects it less readily."""
    assert p_value(1000, 100, 80, 1.0, 1e-4) > p_value(1000, 100, 80, 1.0, 0.0)
    ps = [p_value(1000, 100, 80, e, 1e-5) for e in (0.0, 0.5, 1.0, 2.0, 4.0)]
    assert ps == sorted(ps) and ps[0] < 0.05 < ps[-1]


@pytest.mark.parametrize("r", [10, 50, 200])
def test_all_correct_bound_is_the_closed_form(r):
    # P[Bin(r, q) >= r] = q^r = alpha  =>  epsilon = log(q / (1 - q)) with q = alpha^(1/r)
    q = 0.05 ** (1 / r)
    assert epsilon_lower_bound(r, r, r, 0.0, 0.05) == pytest.approx(math.log(q / (1 - q)), rel=1e-6)


def test_no_better_than_chance_gives_no_bound():
    assert epsilon_lower_bound(1000, 100, 50, 0.0) == 0.0
    with pytest.raises(ValueError, match="v <= r <= m"):
        p_value(10, 20, 5, 1.0, 0.0)


def test_guesses_split_in_and_out():
    g = guesses(np.array([0.1, 0.9, 0.5, 0.3, 0.7]), 4)
    assert g.tolist() == [-1, 1, 0, -1, 1]


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_randomized_response_bound_stays_below_epsilon_and_within_a_factor_of_two(epsilon):
    """Validation: over 40 independent runs of epsilon-DP randomized response on 2,000 canaries, the
    95 % bound exceeds the true epsilon in at most 5 % of them (a few more by chance: <= 4 of 40), and
    its mean lies within a factor of 2 of epsilon."""
    bounds = []
    for seed in range(40):
        g = np.random.default_rng(seed)
        s = g.random(2000) < 0.5
        bounds.append(audit(randomized_response(s, epsilon, g).astype(float), s, 0.0)["epsilon_lb"])
    bounds = np.array(bounds)
    assert (bounds > epsilon).sum() <= 4
    assert epsilon / 2 <= bounds.mean() <= epsilon


def test_a_non_private_release_gives_a_large_bound():
    g = np.random.default_rng(0)
    s = g.random(1000) < 0.5
    found = audit(s.astype(float), s, 0.0)
    assert found["epsilon_lb"] > 4.5 and found["auc"] == 1.0
    assert found["correct"] == found["guesses"]


def test_audit_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="one score per canary"):
        audit(np.zeros(3), np.zeros(4, bool), 0.0)


def test_counts_scores_read_the_canary_cells_net_of_the_true_label():
    excess = np.zeros((3, 4))
    excess[1, 2] = 1.0  # a canary with canary label 2 voted for query 1
    excess[0, 3] = 1.0  # a canary that kept its true label 3 at query 0
    scores = counts_scores(excess, np.array([[1], [0]]), np.array([2, 1]), np.array([0, 3]))
    assert scores.tolist() == [1.0, -1.0]


def test_canaries_are_mislabelled_test_records_half_of_them_in():
    test = pd.DataFrame({"label": np.arange(500) % 10})
    a, b = P.draw_canaries(test, 200, 10, seed=1), P.draw_canaries(test, 200, 10, seed=1)
    assert all((a[k] == b[k]).all() for k in a)
    assert len(set(a["row"])) == 200 and (a["canary_label"] != test["label"].to_numpy()[a["row"]]).all()
    assert set(a["canary_label"]) == set(range(10))
    assert 70 < a["included"].sum() < 130
    with pytest.raises(ValueError, match="exceeds the scenario's 500 test records"):
        P.draw_canaries(test, 501, 10, seed=1)


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory, data_root):
    from pipelib.data.ingest import ingest

    out = tmp_path_factory.mktemp("ingest") / "mnist"
    ingest("mnist", data_root, out)
    return out


@pytest.mark.parametrize("adjacency", ["addremove", "replace"])
def test_an_audited_variant_differs_from_its_scenario_only_by_the_canaries(tmp_path, mnist_dir, adjacency):
    from pipelib.io import read_images, read_table

    task = {"column": "label", "classes": list(range(10))}
    base = {
        "public": "mnist",
        "public_rows": {"split": "test", "start": 0, "stop": 100},
        "private": "mnist",
        "task": "digits",
        "test": {"source": "split_range", "split": "test", "start": 5000, "stop": 5400},
        "scheme": "iid",
        "parties": 3,
        "pool_limit": 600,
    }
    variant = {**base, "audit": {"canaries": 100, "adjacency": adjacency}, "audit_of": "x"}
    tables = {}
    for name, spec in (("base", base), ("audit", variant)):
        out = {k: tmp_path / name / f"{k}.parquet" for k in ("assignment", "public", "test", "summary", "canaries")}
        P.make_partition(name, spec, task, 0, mnist_dir, mnist_dir, out)
        tables[name] = {k: read_table(out[k]).to_pandas() for k in ("assignment", "test")}
    canaries, _, meta = read_images(tmp_path / "audit" / "canaries.parquet")
    assert meta["adjacency"] == adjacency and len(canaries) == 100
    a, b = tables["audit"]["assignment"], tables["base"]["assignment"]
    key = list(zip(canaries["split"], canaries["index"]))
    is_canary = pd.Series(list(zip(a["split"], a["index"]))).isin(key).to_numpy()
    # every other record is where the scenario put it, with its label
    pd.testing.assert_frame_equal(a[~is_canary].reset_index(drop=True), b[~is_canary].reset_index(drop=True))
    assert set(tables["base"]["test"]["index"]) - set(tables["audit"]["test"]["index"]) == set(canaries["index"])
    held = a[is_canary].set_index(["split", "index"]).loc[key]
    inc = canaries["included"].to_numpy()
    assert (held["party"].to_numpy()[inc] == 0).all()
    assert (held["label"].to_numpy()[inc] == canaries["canary_label"].to_numpy()[inc]).all()
    out_party = held["party"].to_numpy()[~inc]
    if adjacency == "replace":  # out: the record with its true label
        assert (out_party == 0).all() and (held["label"].to_numpy()[~inc] == canaries["label"].to_numpy()[~inc]).all()
    else:  # out: absent
        assert (out_party == -3).all()
