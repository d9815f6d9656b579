"""LDP-DL's query plan, budget, active query sampling, server aggregation and KD loss (paper 004)."""

import math

import numpy as np
import pytest
import torch

from pipelib.methods import ldpdl, student, teacher_encoder, teachers
from pipelib.privacy import registry, soft_label


@pytest.mark.parametrize(
    "slots, owners, per_query",
    [(1000, 10_000, 30), (2000, 50, 10), (1000, 100, 30), (7, 10, 4), (40, 40, 2), (3, 5, 5)],
)
def test_query_slots_give_distinct_owners_and_nobody_answers_more_than_the_cap(slots, owners, per_query):
    g = np.random.default_rng(0)
    plan = ldpdl.query_slots(slots, owners, per_query, g)
    assert plan.shape == (slots, per_query)
    assert all(len(set(row)) == per_query for row in plan)
    load = ldpdl.loads(plan, owners)
    cap = ldpdl.answer_cap(slots, owners, per_query)
    assert cap == math.ceil(slots * per_query / owners)
    assert load.sum() == slots * per_query and load.max() == cap and load.min() >= cap - 1
    if (slots, owners, per_query) == (1000, 10_000, 30):  # paper 004's regime: every owner answers 3 times
        assert (load == 3).all()


def test_query_slots_are_uniform_over_owners_and_fail_clearly():
    g = np.random.default_rng(1)
    counts = np.zeros((20, 20))
    for _ in range(300):  # which owners share a slot: every pair about equally often
        for row in ldpdl.query_slots(30, 20, 4, g):
            counts[np.ix_(row, row)] += 1
    pairs = counts[~np.eye(20, dtype=bool)]
    assert pairs.std() / pairs.mean() < 0.1
    with pytest.raises(ValueError, match="N_Q"):
        ldpdl.query_slots(10, 5, 6, g)


def test_each_owner_spends_exactly_its_budget_at_epsilon_over_its_own_load():
    g = np.random.default_rng(1)
    slots = ldpdl.query_slots(1000, 70, 30, g)
    load = ldpdl.loads(slots, 70)
    assert set(load) == {428, 429}
    per = ldpdl.owner_epsilons(5.0, load)
    spent = np.array([soft_label.owner_guarantee("pm", e, int(c)).epsilon for e, c in zip(per, load)])
    assert spent == pytest.approx(np.full(70, 5.0))
    assert ldpdl.owner_epsilons(5.0, np.array([0, 2]))[0] == 0.0


def test_overlapping_owners_draw_their_own_samples_and_overlap_as_configured():
    sets = ldpdl.owner_records("L300", [500, 400, 300], 100, seed=0, scenario="s")
    assert len(sets) == 300 and all(len(r) == 100 and len(set(r)) == 100 for r in sets)
    assert all(r.min() >= 0 and r.max() < 1200 for r in sets)
    again = ldpdl.owner_records("L50", [500, 400, 300], 100, seed=0, scenario="s")
    assert all((a == b).all() for a, b in zip(again, sets[:50]))  # an owner's sample is keyed by its id alone
    held = ldpdl.holders(sets, 1200)
    assert held.sum() == 300 * 100 and abs(held.mean() - 25) < 1e-9  # every record held by 300 x 100 / 1200
    assert 0 < held.std() < 10  # independent draws: holders vary (Binomial(300, 1/12), sd 4.8)
    with pytest.raises(ValueError, match="records"):
        ldpdl.owner_records("L3", [10], 20, seed=0, scenario="s")


def test_pate_teachers_are_disjoint_and_parties_are_their_tables():
    shards = ldpdl.owner_records("T7", [40, 30], 0, seed=3, scenario="s")
    together = np.concatenate(shards)
    assert len(shards) == 7 and len(together) == 70 and len(set(together)) == 70
    assert {len(r) for r in shards} == {10}
    parties = ldpdl.owner_records("parties", [4, 2, 3], 0, seed=3, scenario="s")
    assert [r.tolist() for r in parties] == [[0, 1, 2, 3], [4, 5], [6, 7, 8]]
    with pytest.raises(ValueError, match="design"):
        ldpdl.owner_records("X3", [4], 1, seed=0, scenario="s")


def test_per_record_epsilon_equals_a_brute_force_count():
    g = np.random.default_rng(5)
    sets = ldpdl.owner_records("L12", [30], 8, seed=1, scenario="s")
    spent = g.uniform(0, 3, size=12)
    spent[[2, 7]] = 0  # owners that never answered
    brute = np.array([sum(spent[o] for o in range(12) if r in set(sets[o])) for r in range(30)])
    assert ldpdl.holders(sets, 30, spent) == pytest.approx(brute)


def test_teachers_fit_each_owners_own_records_only():
    g = np.random.default_rng(6)
    x = g.normal(size=(300, 5)).astype(np.float32)
    y = (x[:, 0] + 0.3 * x[:, 1] > 0).astype(int) + 2 * (x[:, 2] > 0.5)
    sets = ldpdl.owner_records("L6", [300], 120, seed=2, scenario="s")
    w, t, acc = teachers.fit_heads(x, y, sets, 4, ridge=1e-3, batch=4)  # batches mix owners
    assert w.shape == (6, 6, 4) and (acc > 0.8).all() and (t > 0).all()
    x2, y2 = x.copy(), y.copy()  # change every record owner 0 does not hold
    outside = np.setdiff1d(np.arange(300), sets[0])
    x2[outside], y2[outside] = g.normal(size=(len(outside), 5)), g.integers(0, 4, len(outside))
    w2, t2, _ = teachers.fit_heads(x2, y2, sets, 4, ridge=1e-3, batch=4)
    assert np.array_equal(w2[0], w[0]) and t2[0] == t[0]
    assert not np.array_equal(w2[1], w[1])
    # the ridge solution of owner 0 alone, in closed form
    a = np.hstack([x[sets[0]], np.ones((120, 1))]).astype(np.float64)
    pen = 1e-3 * 120 * np.diag([1.0] * 5 + [0.0])
    closed = np.linalg.solve(a.T @ a + pen, a.T @ np.eye(4)[y[sets[0]]])
    assert w[0] == pytest.approx(closed, abs=1e-4)
    # owners of unequal sizes batched together (the padded path): each is still its own closed form
    uneven = [sets[0], sets[1][:50], sets[2][:7]]
    wu, _, _ = teachers.fit_heads(x, y, uneven, 4, ridge=1e-3, batch=3)
    for o, rows in enumerate(uneven):
        a_o = np.hstack([x[rows], np.ones((len(rows), 1))]).astype(np.float64)
        pen_o = 1e-3 * len(rows) * np.diag([1.0] * 5 + [0.0])
        alone = np.linalg.solve(a_o.T @ a_o + pen_o, a_o.T @ np.eye(4)[y[rows]])
        assert wu[o] == pytest.approx(alone, abs=1e-4)
    soft = ldpdl.Owner(0, w[0], t[0]).soft(x[:10])
    assert soft.sum(1) == pytest.approx(np.ones(10)) and (soft >= 0).all()
    # the temperature maximises the likelihood of the owner's own labels (a fine grid agrees)
    scores = a @ closed
    grid = np.geomspace(1e-3, 1, 2001)
    nll = [-(torch.log_softmax(torch.from_numpy(scores / g), 1)[np.arange(120), y[sets[0]]]).sum() for g in grid]
    assert t[0] == pytest.approx(grid[int(np.argmin(nll))], rel=0.01)


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
    g = np.random.default_rng(6)
    laplace = registry.parse("laplacebox-eps8.0")
    noisy = np.stack([laplace.release(p, g) for _ in range(400)], axis=1)  # 400 owners' answers
    assert np.abs(ldpdl.server_targets(noisy) - p).max() < 0.2


def test_vote_counts():
    votes = np.array([[0, 1, 2], [0, 2, 2], [1, 2, 2]])  # 3 owners x 3 queries
    assert (ldpdl.vote_counts(votes, 3) == [[2, 1, 0], [0, 1, 2], [0, 0, 3]]).all()
    teacher = ldpdl.Owner(0, np.vstack([10 * np.eye(3), np.zeros((1, 3))]), 1.0)  # scores = 10 x features
    assert (teacher.votes(np.eye(3)[[2, 0]]) == [2, 0]).all()


def test_kd_loss_is_eq_4():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(7, 5, generator=g)
    target = torch.softmax(torch.randn(7, 5, generator=g), 1)
    alpha, beta, tau = 0.3, 2.0, 4.0
    ce = lambda p, q: -(p * torch.log(q)).sum(1)  # noqa: E731
    expected = alpha * ce(target, torch.softmax(logits, 1)) + beta * ce(
        torch.softmax(torch.log(target) / tau, 1), torch.softmax(logits / tau, 1)
    )
    got = student.kd_loss(alpha, beta, tau)(logits, target)
    assert got.item() == pytest.approx(expected.mean().item(), rel=1e-5)
    one_hot = torch.eye(5)[[0, 1, 2, 3, 4, 0, 1]]
    hard = torch.nn.functional.cross_entropy(logits, one_hot.argmax(1))
    assert student.kd_loss(1.0, 0.0, 1.0)(logits, one_hot).item() == pytest.approx(hard.item(), rel=1e-5)


def test_owner_ledger_composes_each_owners_answers_including_silent_owners():
    plan = {
        "owners": 4,
        "per_iteration": 2,
        "total_epsilon": 6.0,
        "loads": [3, 0, 2, 1],
        "slots": [[0, 2], [0, 3], [0, 2]],
    }
    ledger = ldpdl.owner_ledger(plan, 1, "pm")  # after iteration 1: slots 0-1
    assert list(ledger["owner"]) == [0, 1, 2, 3] and list(ledger["answers"]) == [2, 0, 1, 1]
    assert ledger["epsilon"].tolist() == pytest.approx([4.0, 0.0, 3.0, 6.0]) and (ledger["delta"] == 0).all()
    final = ldpdl.owner_ledger({**plan, "per_iteration": 3}, 1, "pm")
    assert final["epsilon"].tolist() == pytest.approx([6.0, 0.0, 6.0, 6.0])
    g = ldpdl.owner_guarantee_of(final.loc[0].to_dict())
    assert g.epsilon == pytest.approx(6.0) and g.accountant.startswith("sequential composition of 3 answers")
    # uneven loads (3, 2, 1; owner 1 silent): owners answer at 6/3, 6/2 and 6/1, and the row says so
    assert ldpdl.answer_epsilon_range(ledger) == pytest.approx((2.0, 6.0))
    even = ldpdl.owner_ledger({**plan, "loads": [2, 0, 2, 2]}, 1, "pm")
    assert ldpdl.answer_epsilon_range(even) == pytest.approx((3.0, 3.0))


# ------------------------------------------------------------------ the workflow on the tiny preset

TINY_LDPDL = "results/tiny/ldpdl/ldpdl_mnist"


@pytest.mark.workflow
def test_table_ldpdl_rows_carry_their_guarantees(tiny):
    import json

    import pandas as pd

    t = pd.read_csv(tiny / "results/tiny/table_ldpdl.csv")
    run = t[t.run == "run"]
    assert set(run["method"]) == {"LDP-DL", "PATE"} and (run["epsilon"] <= 8.0 + 1e-9).all()
    ldp = run[run.method == "LDP-DL"].iloc[0]
    assert ldp["epsilon"] == pytest.approx(8.0) and ldp["delta"] == 0 and ldp["aqs"]
    assert ldp["adjacency"] == "any two inputs of a local randomizer"
    assert ldp["per_answer_epsilon"] * ldp["max_answers"] == pytest.approx(8.0)  # the busiest owner
    assert ldp["per_answer_epsilon"] <= ldp["per_answer_epsilon_max"] <= 8.0  # the least busy owner
    assert ldp["max_answers"] == ldp["answer_cap"] == math.ceil(ldp["mean_answers_paper"])  # owners capped
    assert ldp["owner_design"] == "L40" and ldp["owners"] == 40
    # the three guarantees: per owner (the paper's claim), per teacher's data (one teacher per owner), and
    # per record: the sum over the owners that hold it, at its maximum over the pool
    assert ldp["epsilon_owner"] == ldp["epsilon_teacher_data"] == pytest.approx(8.0)
    assert ldp["epsilon_record"] > ldp["epsilon_owner"] and ldp["epsilon_record"] % 4.0 == pytest.approx(0, abs=1e-6)
    assert ldp["accuracy_low"] <= ldp["accuracy"] <= ldp["accuracy_high"]
    # PATE in two arms on the same shards: LDP-DL's teacher family (a stand-in, marked) and its own CNNs
    arms = run[run.method == "PATE"].set_index("teacher_arm")
    assert sorted(arms.index) == ["own", "same"] and list(arms.loc[["same", "own"], "owner_design"]) == ["T8", "S8"]
    assert arms.loc["own", "teacher_model"] == "fedcnn-4-8-16 from scratch (3 epochs)"
    assert arms.loc["same", "teacher_model"] == ldp["teacher_model"] and ldp["teacher_model"].startswith("ridge heads")
    assert pd.isna(arms.loc["own", "teacher_departure"]) and ldp["teacher_departure"].endswith(
        "(paper: an ImageNet-pretrained ResNet50 fine-tuned on the owner's 4,000 records)"
    )
    assert arms.loc["same", "teacher_departure"].startswith(ldp["teacher_model"])
    assert arms.loc["own", "epsilon"] == pytest.approx(arms.loc["same", "epsilon"])  # the same accountant
    pate = arms.loc["same"]
    assert pate["owner_design"] == "T8" and pate["epsilon_record"] == pytest.approx(pate["epsilon"])
    assert pate["epsilon"] == pytest.approx(8.0, rel=2e-3) and pate["delta"] == 1e-5 and pate["sigma"] > 0
    assert pate["curve"].startswith("rdp gaussian") and pate["epsilon_at_delta_ref"] == pytest.approx(pate["epsilon"])
    quoted = t[t.run == "quoted"]
    assert set(quoted["method"]) == {"DP-SGD", "DP-FL"} and quoted["accuracy"].isna().all()
    assert t["paper_accuracy"].notna().all()
    # the noise-free reference (rule ldpdl_ceiling) on every run row, spending nothing
    ceiling = json.loads((tiny / TINY_LDPDL / "ceiling/result.json").read_text())
    assert ceiling["method"] == "student on true labels" and ceiling["label_accuracy"] == 1.0
    assert ceiling["epsilon"] == math.inf and ceiling["releases"] == 0 and ceiling["queries"] == ldp["queries"]
    assert run["ceiling_accuracy"].to_numpy() == pytest.approx([ceiling["accuracy"]] * len(run))
    assert (run["ceiling_accuracy_low"] <= run["ceiling_accuracy"]).all()


@pytest.mark.workflow
def test_every_owner_spends_its_budget_and_each_record_the_sum_over_its_holders(tiny):
    import json

    import pandas as pd

    from pipelib.io import read_rows

    runs = list((tiny / TINY_LDPDL).glob("*-eps8.0-q2-L40-*"))
    assert runs
    for run in runs:
        plan = json.loads((run / "plan.json").read_text())
        assert max(plan["loads"]) == plan["cap"] == 2
        spent = np.zeros(plan["owners"])
        answered = 0
        for g in sorted(run.glob("iter-*/answers.guarantee.json")):
            for row in json.loads(g.read_text()):  # one row per group of owners with the same answers
                assert row["party"] == -1 and row["epsilon"] == pytest.approx(row["n"] * 8.0 / 2)
                answered += row["owners"] * row["n"]
        assert answered == sum(plan["loads"])
        last = max(run.glob("iter-*/owners.csv"), key=lambda f: int(f.parent.name.split("-")[1]))
        ledger = pd.read_csv(last)  # the run's ledger: one row per owner, composed over its iterations
        assert list(ledger["owner"]) == list(range(plan["owners"])) and (ledger["delta"] == 0).all()
        spent = np.where(np.asarray(plan["loads"]) > 0, 8.0, 0.0)
        assert ledger["epsilon"].to_numpy() == pytest.approx(spent)
        # per record: a brute-force count over the owners' record sets
        parties = sorted((tiny / "results/tiny/partitions/ldpdl_mnist").glob("party-*.parquet"))
        sizes = [read_rows(p) for p in sorted(parties, key=lambda p: int(p.stem.split("-")[1]))]
        sets = ldpdl.owner_records("L40", sizes, 200, 0, "ldpdl_mnist")  # the tiny preset's seed: 0
        per_record = sum(np.load(f) for f in run.glob("iter-*/answers.records.npy"))
        brute = np.array([sum(spent[o] for o in range(40) if r in set(sets[o].tolist())) for r in range(sum(sizes))])
        assert per_record == pytest.approx(brute)
        answers = np.load(run / "iter-1/answers.npy")
        assert answers.shape[1:] == (2, 10)  # S queries x N_Q owners x k classes


@pytest.mark.workflow
def test_active_sampling_queries_what_the_student_is_least_sure_of(tiny):
    import torch

    from pipelib.io import read_images
    from pipelib.train import loop
    from pipelib.train.supervised import load_model

    run = tiny / TINY_LDPDL / "pm-eps8.0-q2-L40-aqs"
    model = load_model(run / "iter-1/student.pt", "cpu")
    _, images, _ = read_images(tiny / "results/tiny/partitions/ldpdl_mnist/public.parquet")
    probs = torch.softmax(loop.predict(model, loop.to_device(images, "cpu")), 1).numpy()
    asked = np.load(run / "iter-1/queries.npy")
    expected = ldpdl.least_confident(probs, np.setdiff1d(np.arange(len(images)), asked), len(asked))
    assert (np.load(run / "iter-1/next.npy") == expected).all()
    random_run = tiny / TINY_LDPDL / "pm-eps8.0-q2-L40-random"
    assert not (random_run / "iter-2").exists()  # without AQS: all S x T random queries in one iteration
    assert len(np.load(random_run / "iter-1/queries.npy")) == 2 * len(asked)


def test_the_teachers_encoder_gives_each_image_features_of_its_own(tmp_path):
    """A frozen transfer encoder (eval mode): an image's features do not depend on the other images of
    the batch, so a teacher fitted on them still depends on its owner's records only; the projection is
    the source images' principal axes; L2-normalised parts of equal weight."""
    from pipelib.features import hog_encoder
    from pipelib.train.models import build
    from pipelib.train.supervised import save_model

    torch.manual_seed(0)
    model = build("cnn3-4-6-8-d0.1", (3, 32, 32), 5)
    model.train()(torch.randn(16, 3, 32, 32))  # BatchNorm statistics that are not the defaults
    g = np.random.default_rng(0)
    source = torch.from_numpy(g.integers(0, 256, (40, 3, 32, 32), dtype=np.uint8))
    maps = teacher_encoder.pooled_maps(model, source, 2)
    assert maps.shape == (40, 8 * 2 * 2)
    proj = teacher_encoder.fit_projection(maps, 5)
    centred = maps.double().numpy() - maps.double().numpy().mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)  # the same axes, up to sign
    assert np.abs(proj["components"].double().numpy() @ vt[:5].T) == pytest.approx(np.eye(5), abs=1e-4)
    save_model(model, tmp_path / "encoder.pt", pool=2, projection=proj)
    images = g.integers(0, 256, (12, 32, 32, 3), dtype=np.uint8)
    f = teacher_encoder.encoder_features(images, {"kind": "transfer"}, tmp_path / "encoder.pt")
    assert f.shape == (12, 5) and np.linalg.norm(f, axis=1) == pytest.approx(np.ones(12), abs=1e-5)
    others = images.copy()
    others[1:] = g.integers(0, 256, (11, 32, 32, 3), dtype=np.uint8)
    assert teacher_encoder.extractor_features(others, tmp_path / "encoder.pt")[0] == pytest.approx(f[0], abs=1e-5)
    assert teacher_encoder.extractor_features(others[[0]], tmp_path / "encoder.pt")[0] == pytest.approx(f[0], abs=1e-5)
    hog = {"kind": "hog", "orientations": 9, "cells": 4}
    both = teacher_encoder.encoder_features(images, {"kind": "transfer", "hog": hog}, tmp_path / "encoder.pt")
    h = hog_encoder(images, hog)
    assert both == pytest.approx(np.hstack([f, h]) / np.sqrt(2), abs=1e-5)
    with pytest.raises(ValueError, match="need its model file"):
        teacher_encoder.encoder_features(images, {"kind": "transfer"})
    with pytest.raises(ValueError, match="hog or a transfer encoder"):
        teacher_encoder.encoder_features(images, {"kind": "simclr"})


def test_flip_crop_shifts_and_flips_within_the_image_range():
    """Every view is the image (or its mirror image) shifted by one offset of up to 4 pixels per batch,
    reflect-padded; both orientations occur; seeded views repeat."""
    torch.manual_seed(3)
    x = torch.randint(0, 256, (64, 3, 32, 32), dtype=torch.uint8)
    out = teacher_encoder.flip_crop(x)
    assert out.shape == x.shape and out.min() >= -1 and out.max() <= 1
    scaled = x.float() * (2 / 255) - 1
    views = {
        (i, j): (
            torch.nn.functional.pad(scaled, (4, 4, 4, 4), mode="reflect")[:, :, i : i + 32, j : j + 32],
            torch.nn.functional.pad(scaled.flip(3), (4, 4, 4, 4), mode="reflect")[:, :, i : i + 32, j : j + 32],
        )
        for i in range(9)
        for j in range(9)
    }
    shifts = [
        ij
        for ij, (a, b) in views.items()
        if all(torch.equal(out[n], a[n]) or torch.equal(out[n], b[n]) for n in range(64))
    ]
    assert len(shifts) == 1
    plain, mirrored = views[shifts[0]]
    flips = [torch.equal(out[n], mirrored[n]) for n in range(64)]
    assert 0 < sum(flips) < 64
    gray = teacher_encoder.flip_crop(torch.zeros(4, 1, 28, 28, dtype=torch.uint8))  # background padding only
    assert gray.shape == (4, 1, 28, 28) and (gray == -1).all()
    torch.manual_seed(3)
    torch.randint(0, 256, (64, 3, 32, 32), dtype=torch.uint8)
    assert torch.equal(teacher_encoder.flip_crop(x), out)


def test_pate_cnn_teachers_train_on_their_own_shard_only_and_vote_with_their_own_weights(tmp_path):
    """Design S<n>: the shards of T<n>; each CNN's weights depend on its own records only (a teacher
    trained beside others equals it trained alone, and changing another shard changes nothing), and the
    saved teachers vote as their weights say."""
    assert [list(r) for r in ldpdl.owner_records("S5", [30, 23], 0, 3, "x")] == [
        list(r) for r in ldpdl.owner_records("T5", [30, 23], 0, 3, "x")
    ]
    g = np.random.default_rng(0)
    images = g.integers(0, 256, (60, 12, 12, 1), dtype=np.uint8)
    labels = g.integers(0, 3, 60)
    sets = [np.arange(0, 10), np.arange(10, 20), np.arange(20, 30), np.arange(30, 39)]
    settings = {"arch": "fedcnn-2-4-8", "epochs": 3, "batch": 4, "lr": 0.1, "group": 2}
    together, acc = teachers.train_cnn_teachers(images, labels, sets, 3, settings, 0, "k")
    alone, _ = teachers.train_cnn_teachers(images, labels, sets[:1], 3, settings, 0, "k")
    other = labels.copy()
    other[10:20] = (other[10:20] + 1) % 3  # another teacher's shard changes
    changed, _ = teachers.train_cnn_teachers(images, other, sets, 3, settings, 0, "k")
    for name, w in together.items():
        np.testing.assert_allclose(w[0], alone[name][0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(w[0], changed[name][0])
        assert not np.array_equal(w[1], changed[name][1])
    assert ((0 <= acc) & (acc <= 1)).all()
    path = tmp_path / "teachers.npz"
    teachers.save_cnn_teachers(path, together, settings["arch"])
    params, arch = teachers.load_cnn_teachers(path)
    assert arch == settings["arch"] and params.keys() == together.keys()
    votes = teachers.cnn_votes(params, arch, 3, images[40:])
    model = teachers.build(arch, (1, 12, 12), 3).eval()
    for t in range(len(sets)):
        model.load_state_dict({n: torch.from_numpy(p[t]) for n, p in params.items()})
        with torch.no_grad():
            own = model(teachers.loop.scale(torch.from_numpy(images[40:]).permute(0, 3, 1, 2))).argmax(1).numpy()
        np.testing.assert_array_equal(votes[t], own)


@pytest.mark.workflow
def test_the_ceilings_benchmark_reports_every_teachers_file_beside_hog_heads(tiny):
    """benchmarks/ldpdl_ceilings.py --hog: one row per teachers file (runs or not), with the transfer
    teachers' and the HOG heads' one-teacher accuracies of the same sampled teachers."""
    import json
    import subprocess
    import sys

    from helpers import REPO

    proc = subprocess.run(
        [sys.executable, "benchmarks/ldpdl_ceilings.py", str(tiny / "results/tiny"), "--hog"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    head, _, *lines = [line for line in proc.stdout.splitlines() if line.startswith("|")]
    cols = [c.strip() for c in head.strip("|").split("|")]
    rows = [dict(zip(cols, (c.strip() for c in line.strip("|").split("|")))) for line in lines]
    files = [r for r in rows if r["scenario"] == "ldpdl_mnist" and not r.get("run")]
    assert {r["teachers"] for r in files} >= {"L40", "T8", "S8"}, proc.stdout
    info = json.loads((tiny / TINY_LDPDL / "teachers-L40/teachers.json").read_text())
    for r in files:  # PATE's own CNN teachers (S8) have no HOG heads to compare with
        assert 0 < float(r["one teacher"]) <= 1
        assert (r["teachers"] == "S8") == (r["one teacher, HOG heads"] in ("", "nan")), r
    assert 0 < float(next(r for r in files if r["teachers"] == "S8")["noise-free vote"]) <= 1
    l40 = next(r for r in files if r["teachers"] == "L40")
    assert float(l40["features"]) == info["features"] and l40["records each"] == "200"
    assert 0 < float(next(r for r in files if r["teachers"] == "T8")["noise-free vote"]) <= 1
    # --students: each kept run's student on its queries with the true labels and with the noise-free labels
    args = ["--students", "--through-noise", "--teachers", "L40", "--runs", "*-aqs", "--scenarios", "ldpdl_mnist"]
    proc = subprocess.run(
        [sys.executable, "benchmarks/ldpdl_ceilings.py", str(tiny / "results/tiny"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = [line for line in proc.stdout.split("\n\n")[0].splitlines() if line.startswith("|")]
    cols = [c.strip() for c in table[0].strip("|").split("|")]
    runs = [dict(zip(cols, (c.strip() for c in line.strip("|").split("|")))) for line in table[2:]]
    runs = [r for r in runs if r.get("run")]
    assert runs and {r["teachers"] for r in runs} == {"L40"} and all(r["run"].endswith("-aqs") for r in runs)
    assert any(r["run"].startswith("pm-") for r in runs)
    for r in runs:
        assert 0 < float(r["student on true labels"]) <= 1 and 0 < float(r["student on noise-free labels"]) <= 1
        kinds = ("labels", "student", "student on its argmax")
        noise_arms = [f"{a} answers + noise: {c}" for a in ("hard", "perfect") for c in kinds]
        pm = r["run"].startswith("pm-")  # --through-noise: PM runs only
        assert all((0 < float(r[c]) <= 1) if pm else r[c] in ("", "nan") for c in noise_arms), r
