"""LDP-DL's query plan, budget, active query sampling, server aggregation and KD loss (paper 004)."""

import math

import numpy as np
import pytest
import torch

from pipelib.methods import ldpdl
from pipelib.privacy import registry, soft_label


def test_query_slots_draw_distinct_owners_per_query_with_uniform_loads():
    g = np.random.default_rng(0)
    slots = ldpdl.query_slots(2000, 50, 10, g)
    assert slots.shape == (2000, 10)
    assert all(len(set(row)) == 10 for row in slots)
    load = ldpdl.loads(slots, 50)
    assert load.sum() == 20_000 and load.mean() == 400
    # Binomial(2000, 10/50) per owner: the worst owner is well above the average the paper divides by
    assert load.max() > 400 and abs(load.std() - math.sqrt(2000 * 0.2 * 0.8)) < 6
    with pytest.raises(ValueError, match="N_Q"):
        ldpdl.query_slots(10, 5, 6, g)


def test_worst_owner_budget_bounds_every_owner():
    g = np.random.default_rng(1)
    slots = ldpdl.query_slots(1000, 100, 30, g)
    load = ldpdl.loads(slots, 100)
    per = soft_label.answer_epsilon(5.0, load)
    spent = np.array([soft_label.owner_guarantee("pm", per, int(c)).epsilon for c in load])
    assert spent.max() == pytest.approx(5.0) and (spent <= 5.0 + 1e-12).all()
    paper = 5.0 / (1000 * 30 / 100)  # the paper's per-answer epsilon from the average load
    assert (load * paper).max() > 5.0  # ... which the busiest owner overspends


def test_active_sampling_picks_the_lowest_confidence_samples():
    g = np.random.default_rng(2)
    probs = g.dirichlet(np.ones(10) * 0.3, size=500)
    available = np.arange(100, 500)
    picked = ldpdl.least_confident(probs, available, 40)
    assert len(picked) == 40 and set(picked) <= set(available)
    top = probs.max(1)
    # Eq. 5's score is (k P* - 1)/(k - 1): least confidence; every picked sample is below every other one
    assert top[picked].max() <= np.delete(top, np.r_[np.arange(100), picked]).min()
    assert np.allclose(ldpdl.confidence_score(probs), (10 * top - 1) / 9)
    with pytest.raises(ValueError, match="left"):
        ldpdl.least_confident(probs, available, 401)


def test_random_queries_are_distinct_available_and_seeded():
    a = ldpdl.random_queries(np.arange(10, 60), 20, np.random.default_rng(3))
    b = ldpdl.random_queries(np.arange(10, 60), 20, np.random.default_rng(3))
    assert (a == b).all() and len(set(a)) == 20 and a.min() >= 10 and a.max() < 60


def test_projection_onto_the_simplex_satisfies_its_optimality_conditions():
    g = np.random.default_rng(4)
    v = g.normal(0.1, 2.0, size=(300, 10))
    p = ldpdl.project_simplex(v)
    assert np.allclose(p.sum(1), 1) and (p >= 0).all()
    # KKT: v - p = theta 1 - mu, mu >= 0, mu_i p_i = 0
    theta = np.array([(v[i] - p[i])[p[i] > 0].mean() for i in range(len(v))])
    mu = theta[:, None] - (v - p)
    assert (mu > -1e-9).all() and np.abs(mu * p).max() < 1e-9
    q = g.dirichlet(np.ones(10), size=5)
    assert np.allclose(ldpdl.project_simplex(q), q)
    assert np.allclose(ldpdl.project_simplex(np.array([[2.0, 0.0, 0.0]])), [[1, 0, 0]])


def test_server_targets_recover_noise_free_answers_and_average_noisy_ones():
    p = np.random.default_rng(5).dirichlet(np.ones(4), size=6)
    exact = np.repeat(soft_label.to_box(p)[:, None, :], 3, axis=1)
    assert np.allclose(ldpdl.server_targets(exact), p)
    owners = [ldpdl.Owner(i, np.tile(p, (1, 1))) for i in range(400)]
    g = np.random.default_rng(6)
    laplace = registry.parse("laplacebox-eps8.0")
    noisy = np.stack([o.answer(np.arange(6), laplace, g) for o in owners], axis=1)
    assert np.abs(ldpdl.server_targets(noisy) - p).max() < 0.2


def test_vote_counts():
    votes = np.array([[0, 1, 2], [0, 2, 2], [1, 2, 2]])  # 3 owners x 3 queries
    assert (ldpdl.vote_counts(votes, 3) == [[2, 1, 0], [0, 1, 2], [0, 0, 3]]).all()
    assert (ldpdl.Owner(0, np.eye(3)[[2, 0]]).votes(np.array([1, 0])) == [0, 2]).all()


def test_kd_loss_is_eq_4():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(7, 5, generator=g)
    target = torch.softmax(torch.randn(7, 5, generator=g), 1)
    alpha, beta, tau = 0.3, 2.0, 4.0
    ce = lambda p, q: -(p * torch.log(q)).sum(1)  # noqa: E731
    expected = alpha * ce(target, torch.softmax(logits, 1)) + beta * ce(
        torch.softmax(torch.log(target) / tau, 1), torch.softmax(logits / tau, 1)
    )
    got = ldpdl.kd_loss(alpha, beta, tau)(logits, target)
    assert got.item() == pytest.approx(expected.mean().item(), rel=1e-5)
    one_hot = torch.eye(5)[[0, 1, 2, 3, 4, 0, 1]]
    hard = torch.nn.functional.cross_entropy(logits, one_hot.argmax(1))
    assert ldpdl.kd_loss(1.0, 0.0, 1.0)(logits, one_hot).item() == pytest.approx(hard.item(), rel=1e-5)


def test_owner_ledger_composes_each_owners_answers_including_silent_owners():
    ledger = ldpdl.owner_ledger({0: 3, 2: 5}, 4, "pm", 0.25)
    assert list(ledger["owner"]) == [0, 1, 2, 3] and list(ledger["answers"]) == [3, 0, 5, 0]
    assert ledger["epsilon"].tolist() == pytest.approx([0.75, 0.0, 1.25, 0.0]) and (ledger["delta"] == 0).all()
    assert ledger.loc[2, "accountant"].startswith("sequential composition of 5 answers")


# ------------------------------------------------------------------ the workflow on the tiny preset

TINY_LDPDL = "results/tiny/ldpdl/ldpdl_mnist"


@pytest.mark.workflow
def test_table_ldpdl_rows_carry_their_guarantees(tiny):
    import pandas as pd

    t = pd.read_csv(tiny / "results/tiny/table_ldpdl.csv")
    run = t[t.run == "run"]
    assert set(run["method"]) == {"LDP-DL", "PATE"} and (run["epsilon"] <= 8.0 + 1e-9).all()
    ldp = run[run.method == "LDP-DL"].iloc[0]
    assert ldp["epsilon"] == pytest.approx(8.0) and ldp["delta"] == 0 and ldp["aqs"]
    assert ldp["adjacency"] == "any two inputs of a local randomizer"
    assert ldp["per_answer_epsilon"] * ldp["max_answers"] == pytest.approx(8.0)  # the busiest owner
    assert ldp["max_answers"] >= ldp["mean_answers_paper"]  # the paper's average-load budget is not enough
    pate = run[run.method == "PATE"].iloc[0]
    assert pate["epsilon"] == pytest.approx(8.0, rel=2e-3) and pate["delta"] == 1e-5 and pate["sigma"] > 0
    assert pate["curve"].startswith("rdp gaussian") and pate["epsilon_at_delta_ref"] == pytest.approx(pate["epsilon"])
    quoted = t[t.run == "quoted"]
    assert set(quoted["method"]) == {"DP-SGD", "DP-FL"} and quoted["accuracy"].isna().all()
    assert t["paper_accuracy"].notna().all()


@pytest.mark.workflow
def test_every_owner_spends_at_most_its_budget_and_the_busiest_spends_it(tiny):
    import json

    import pandas as pd

    for run in (tiny / TINY_LDPDL).glob("*-eps8.0-q2-*"):
        plan = json.loads((run / "plan.json").read_text())
        spent: dict[int, float] = {}
        for g in sorted(run.glob("iter-*/answers.guarantee.json")):
            for row in json.loads(g.read_text()):
                spent[row["party"]] = spent.get(row["party"], 0.0) + row["epsilon"]
        assert max(spent.values()) == pytest.approx(8.0) and all(v <= 8.0 + 1e-9 for v in spent.values())
        assert sorted(spent) == [o for o, c in enumerate(plan["loads"]) if c > 0]
        last = max(run.glob("iter-*/owners.csv"), key=lambda f: int(f.parent.name.split("-")[1]))
        ledger = pd.read_csv(last)  # the run's ledger: one row per owner, composed over its iterations
        assert list(ledger["owner"]) == list(range(plan["owners"])) and (ledger["delta"] == 0).all()
        assert ledger["epsilon"].to_numpy() == pytest.approx([spent.get(o, 0.0) for o in range(plan["owners"])])
        answers = np.load(run / "iter-1/answers.npy")
        assert answers.shape == (plan["per_iteration"], 2, 10)  # S queries x N_Q owners x k classes


@pytest.mark.workflow
def test_active_sampling_queries_what_the_student_is_least_sure_of(tiny):
    import torch

    from pipelib.io import read_images
    from pipelib.train import loop
    from pipelib.train.supervised import load_model

    run = tiny / TINY_LDPDL / "pm-eps8.0-q2-aqs"
    model = load_model(run / "iter-1/student.pt", "cpu")
    _, images, _ = read_images(tiny / "results/tiny/partitions/ldpdl_mnist/public.parquet")
    probs = torch.softmax(loop.predict(model, loop.to_device(images, "cpu")), 1).numpy()
    asked = np.load(run / "iter-1/queries.npy")
    expected = ldpdl.least_confident(probs, np.setdiff1d(np.arange(len(images)), asked), len(asked))
    assert (np.load(run / "iter-1/next.npy") == expected).all()
    random_run = tiny / TINY_LDPDL / "pm-eps8.0-q2-random"
    assert not (random_run / "iter-2").exists()  # without AQS: all S x T random queries in one iteration
    assert len(np.load(random_run / "iter-1/queries.npy")) == 2 * len(asked)
