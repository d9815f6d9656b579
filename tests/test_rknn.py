"""Reverse k-NN labeling: mechanisms against closed forms and simulation, clustering, votes, encoders."""

import itertools
import math

import numpy as np
import pytest
import torch

from pipelib import represent
from pipelib.methods import rknn
from pipelib.privacy import laplace, local, registry

# ------------------------------------------------------------------------------------------ Laplace


def test_laplace_scale_is_sensitivity_2k_over_eps():
    assert laplace.laplace_scale(0.1, 1) == pytest.approx(20.0)
    assert laplace.laplace_scale(0.5, 3) == pytest.approx(12.0)


def test_laplace_noise_matches_its_distribution():
    g = np.random.default_rng(0)
    noisy = laplace.laplace_counts(np.zeros((400, 250)), 0.5, 2, g)
    b = laplace.laplace_scale(0.5, 2)
    assert abs(noisy.mean()) < 0.05 * b
    assert noisy.std() == pytest.approx(math.sqrt(2) * b, rel=0.02)
    assert np.mean(np.abs(noisy) > b) == pytest.approx(math.exp(-1), abs=0.005)  # P(|X| > b) = e^-1


def test_laplace_privacy_loss_is_bounded_by_eps_for_neighbouring_counts():
    """Replacing one record moves 2k cells by 1 (L1 = 2k): the density ratio is at most e^eps everywhere."""
    eps, b = 0.3, laplace.laplace_scale(0.3, 2)  # k = 2
    a = np.array([5.0, 3.0, 0.0, 1.0])
    a2 = a + np.array([-1.0, -1.0, 1.0, 1.0])  # k = 2 votes moved from (q0,c), (q1,c) to (q2,c'), (q3,c')
    z = np.random.default_rng(1).normal(0, 30, size=(2000, 4))
    log_ratio = (-np.abs(z - a).sum(1) + np.abs(z - a2).sum(1)) / b
    assert np.abs(log_ratio).max() <= eps + 1e-12


# ------------------------------------------------------------------------------ randomized response


@pytest.mark.parametrize("eps,k", [(0.4, 1), (2.0, 3), (8.0, 1)])
def test_rr_flip_rate_closed_form_and_simulation(eps, k):
    f = local.rr_flip_probability(eps, k)
    assert f == pytest.approx(1 / (math.exp(eps / (2 * k)) + 1))
    g = np.random.default_rng(2)
    bits = np.zeros((20000, 10), dtype=bool)
    bits[:, 3] = True
    ones = local.rr_release(bits, eps, k, g)
    n = bits.size - 20000
    assert ones[3] / 20000 == pytest.approx(1 - f, abs=5 * math.sqrt(f * (1 - f) / 20000))
    zeros_flipped = (ones.sum() - ones[3]) / n
    assert zeros_flipped == pytest.approx(f, abs=5 * math.sqrt(f * (1 - f) / n))


def test_rr_record_level_epsilon():
    """Two records' vote vectors differ in at most 2k bits; the output likelihood ratio is <= e^eps."""
    eps, k = 1.0, 2
    f = local.rr_flip_probability(eps, k)
    x = np.array([1, 1, 0, 0, 0, 0], dtype=bool)
    x2 = np.array([0, 0, 1, 1, 0, 0], dtype=bool)
    worst = 0.0
    for out in itertools.product([0, 1], repeat=6):
        out = np.array(out, dtype=bool)
        p = np.prod(np.where(out == x, 1 - f, f))
        p2 = np.prod(np.where(out == x2, 1 - f, f))
        worst = max(worst, abs(math.log(p / p2)))
    assert worst == pytest.approx(eps)


def test_rr_estimator_is_unbiased():
    g = np.random.default_rng(3)
    bits = np.zeros((5000, 8), dtype=bool)
    bits[:2000, 0] = True
    bits[2000:2500, 5] = True
    est = np.mean([local.rr_estimate(local.rr_release(bits, 2.0, 1, g), 5000, 2.0, 1) for _ in range(40)], 0)
    f = local.rr_flip_probability(2.0, 1)
    sd = math.sqrt(5000 * f * (1 - f)) / (1 - 2 * f) / math.sqrt(40)
    assert np.allclose(est, bits.sum(0), atol=5 * sd)


# ----------------------------------------------------------------------------------------- Collision


@pytest.mark.parametrize("eps,m", [(0.4, 1), (1.0, 2), (3.0, 3)])
def test_collision_output_size_and_rates(eps, m):
    t, omega, tr, fr = local.collision_params(eps, m)
    assert t == int(m * math.exp(eps) + 2 * m - 1)
    assert omega == pytest.approx(m * math.exp(eps) + t - m)
    assert tr == pytest.approx(math.exp(eps) / omega) and fr == pytest.approx(1 / t)


@pytest.mark.parametrize("eps,m", [(0.4, 1), (1.0, 2), (3.0, 3)])
def test_collision_is_pure_ldp_over_all_item_sets(eps, m):
    """For a fixed hash table, every output's probability ratio between any two records is <= e^eps."""
    g = np.random.default_rng(4)
    d = 6
    t = local.collision_params(eps, m)[0]
    for _ in range(20):
        hashes = g.integers(0, t, d)
        probs = [
            local.collision_output_probabilities(np.array(s), hashes, eps, m)
            for s in itertools.combinations(range(d), m)
        ]
        for p in probs:
            assert p.sum() == pytest.approx(1.0) and (p > 0).all()
        stacked = np.stack(probs)
        assert np.log(stacked.max(0) / stacked.min(0)).max() <= eps + 1e-12


def test_collision_sampler_matches_its_closed_form():
    eps, m, d = 1.0, 2, 5
    g = np.random.default_rng(5)
    t = local.collision_params(eps, m)[0]
    # one record, many independent reports: compare hit rates of own vs other items to the rates
    sets = np.tile(np.array([[0, 3]]), (40000, 1))
    hits = local.collision_release(sets, d, eps, g)
    _, _, tr, fr = local.collision_params(eps, m)
    assert hits[0] / 40000 == pytest.approx(tr, abs=0.01) and hits[3] / 40000 == pytest.approx(tr, abs=0.01)
    assert hits[[1, 2, 4]].mean() / 40000 == pytest.approx(fr, abs=0.01)
    assert t > m


def test_collision_estimator_is_unbiased():
    g = np.random.default_rng(6)
    d, m, eps, n = 12, 2, 3.0, 6000
    sets = np.array([g.choice(d, m, replace=False) for _ in range(n)])
    truth = np.bincount(sets.ravel(), minlength=d)
    runs = 30
    est = np.mean(
        [local.collision_estimate(local.collision_release(sets, d, eps, g), n, eps, m) for _ in range(runs)], 0
    )
    _, _, tr, fr = local.collision_params(eps, m)
    sd = math.sqrt(n * max(tr * (1 - tr), fr * (1 - fr))) / (tr - fr) / math.sqrt(runs)
    assert np.allclose(est, truth, atol=5 * sd)


# ------------------------------------------------------------------------------- clustering and votes


def blobs(n_per=200, centers=((0, 0), (10, 0), (0, 10), (10, 10)), seed=0):
    g = np.random.default_rng(seed)
    x = np.concatenate([g.normal(c, 0.5, (n_per, 2)) for c in centers]).astype(np.float32)
    return x, np.repeat(np.arange(len(centers)), n_per)


def test_kmeans_recovers_separated_blobs_and_is_deterministic():
    x, y = blobs()
    centers, assign = rknn.kmeans(x, 4, seed=0)
    assert len(set(zip(assign.tolist(), y.tolist()))) == 4  # each blob is exactly one cluster
    c2, a2 = rknn.kmeans(x, 4, seed=0)
    assert (a2 == assign).all() and np.allclose(c2, centers)


def test_kmeans_inertia_is_the_sum_of_squared_distances_to_the_assigned_centers():
    x = np.array([[0, 0], [2, 0], [10, 10], [10, 12]], dtype=np.float32)
    centers = np.array([[1, 0], [10, 11]], dtype=np.float32)
    assert rknn.inertia(x, centers, np.array([0, 0, 1, 1])) == pytest.approx(4.0)
    assert rknn.inertia(x, centers, np.array([1, 0, 1, 0])) == pytest.approx(221 + 1 + 1 + 225)


def test_kmeans_starts_keep_the_lowest_inertia_and_one_start_is_the_single_start_run():
    g = np.random.default_rng(0)  # a 5 x 5 grid of overlapping blobs: k-means has many local optima
    x = np.concatenate([g.normal((4 * i, 4 * j), 1.0, (30, 2)) for i in range(5) for j in range(5)])
    x = x.astype(np.float32)
    single = [rknn.kmeans(x, 25, seed) for seed in range(12)]
    multi = [rknn.kmeans(x, 25, seed, starts=8) for seed in range(12)]
    c1, a1 = rknn.kmeans(x, 25, 3, starts=1)
    assert (a1 == single[3][1]).all() and np.allclose(c1, single[3][0])
    i1 = np.array([rknn.inertia(x, c, a) for c, a in single])
    i8 = np.array([rknn.inertia(x, c, a) for c, a in multi])
    assert (i8 <= i1 * (1 + 1e-6)).all()  # start 0 is the single-start run, so the best is never worse
    assert (i8 < i1 * 0.95).sum() >= 6  # and single starts often land in a worse local optimum
    with pytest.raises(ValueError, match="starts"):
        rknn.kmeans(x, 5, 0, starts=0)


def test_kmeanspp_spreads_its_seeds():
    x, y = blobs()
    init = rknn.kmeans_pp_init(x, 4, np.random.default_rng(0))
    nearest_blob = np.argmin(((init[:, None] - np.array([[0, 0], [10, 0], [0, 10], [10, 10]])) ** 2).sum(-1), 1)
    assert len(set(nearest_blob.tolist())) >= 3


def test_votes_count_each_record_k_times():
    centers = np.array([[0, 0], [10, 0], [0, 10]], dtype=np.float32)
    emb = np.array([[1, 0], [9, 1], [0, 9], [0.5, 0.5]], dtype=np.float32)
    labels = np.array([0, 1, 1, 2])
    nn = rknn.nearest_queries(emb, centers, 1)
    assert nn[:, 0].tolist() == [0, 1, 2, 0]
    counts = rknn.vote_counts(nn, labels, 3, 3)
    assert counts.tolist() == [[1, 0, 1], [0, 1, 0], [0, 1, 0]]
    counts2 = rknn.vote_counts(rknn.nearest_queries(emb, centers, 2), labels, 3, 3)
    assert counts2.sum() == 2 * len(labels)
    assert (rknn.item_sets(nn, labels, 3)[:, 0] == nn[:, 0] * 3 + labels).all()


def test_mechanism_names():
    lap = registry.parse("laplace-eps0.1")
    assert (lap.name, lap.epsilon, lap.locality, lap.spec) == ("laplace", 0.1, "central", "laplace-eps0.1")
    none = registry.parse("none")
    assert (none.name, none.epsilon, none.guarantee(1).epsilon) == ("none", math.inf, math.inf)
    assert registry.parse("rr-eps4.0").locality == "local"
    with pytest.raises(ValueError, match="unknown mechanism"):
        registry.parse("gauss-eps1.0")
    with pytest.raises(ValueError, match="takes no epsilon"):
        registry.parse("laplace")


def test_registered_mechanisms_match_the_vocabulary():
    from pipelib import vocab

    assert tuple(registry.MECHANISMS) == vocab.MECHANISMS + vocab.SOFT_LABEL_MECHANISMS + vocab.WEIGHT_MECHANISMS


def test_votes_answer_counts_equal_vote_counts():
    centers = np.array([[0, 0], [10, 0], [0, 10]], dtype=np.float32)
    emb = np.array([[1, 0], [9, 1], [0, 9], [0.5, 0.5]], dtype=np.float32)
    labels = np.array([0, 1, 1, 2])
    nn = rknn.nearest_queries(emb, centers, 2)
    votes = rknn.Votes(rknn.item_sets(nn, labels, 3), (3, 3))
    assert votes.k == 2 and (votes.counts() == rknn.vote_counts(nn, labels, 3, 3)).all()


def test_teacher_spec_round_trip():
    t = rknn.RknnTeacher.parse("rknn-simclr_2-s500-k3")
    assert (t.encoder, t.s, t.k, t.spec) == ("simclr_2", 500, 3, "rknn-simclr_2-s500-k3")
    with pytest.raises(ValueError, match="bad reverse k-NN teacher"):
        rknn.RknnTeacher.parse("rknn-hog-s0-k1")


# ---------------------------------------------------------------------------------------- encoders


def test_hog_features_shape_and_norm():
    imgs = np.random.default_rng(0).integers(0, 256, (3, 28, 28, 1), dtype=np.uint8)
    f = represent.hog_features(imgs, cells=4)
    assert f.shape == (3, 3 * 3 * 2 * 2 * 9) and np.allclose(np.linalg.norm(f, axis=1), 1)
    rgb = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3), dtype=np.uint8)
    assert represent.hog_features(rgb).shape == (2, 324)


def test_nt_xent_prefers_matching_views():
    z = torch.randn(8, 16)
    aligned = torch.cat([z, z + 0.01 * torch.randn(8, 16)])
    shuffled = torch.cat([z, torch.randn(8, 16)])
    assert represent.nt_xent(aligned, 0.5) < represent.nt_xent(shuffled, 0.5)


@pytest.mark.parametrize("rgb", [False, True])
def test_augment_keeps_shape_and_range(rgb):
    torch.manual_seed(0)
    x = torch.rand(4, 3 if rgb else 1, 32, 32) * 2 - 1
    out = represent.augment(x, rgb)
    assert out.shape == x.shape and out.min() >= -1 and out.max() <= 1
    assert not torch.allclose(out, x)


def test_simclr_trains_and_embeds():
    torch.manual_seed(0)
    x = torch.randint(0, 255, (64, 1, 28, 28), dtype=torch.uint8)
    enc = represent.train_simclr(
        x,
        {"arch": "cnn2-4-8-d0.1", "dim": 8, "epochs": 1, "batch": 32, "lr": 1e-3, "temperature": 0.5},
        torch.Generator().manual_seed(0),
    )
    e = represent.embed(enc, x)
    assert e.shape == (64, 8) and np.allclose(np.linalg.norm(e, axis=1), 1, atol=1e-5)


def _moments(img: np.ndarray):
    """Centre of mass and the shear moment cov(x, y) / var(y) of a 2-D image."""
    ys, xs = np.mgrid[: img.shape[0], : img.shape[1]]
    m = img.sum()
    my, mx = (ys * img).sum() / m, (xs * img).sum() / m
    return my, mx, ((ys - my) * (xs - mx) * img).sum() / ((ys - my) ** 2 * img).sum()


def test_deskew_straightens_and_centres_a_slanted_stroke_and_keeps_an_upright_centred_one():
    img = np.zeros((28, 28), np.uint8)
    for y in range(4, 24):  # a stroke slanted by 0.5 pixel per row
        img[y, int(round(8 + 0.5 * (y - 4))) : int(round(8 + 0.5 * (y - 4))) + 3] = 255
    upright = np.zeros((28, 28), np.uint8)
    upright[5:24, 13:16] = 255  # centre of mass at the image centre (14, 14)
    out = represent.deskew(np.stack([img, upright, np.zeros_like(img)])[..., None])[..., 0]
    assert abs(_moments(img.astype(float))[2]) == pytest.approx(0.5, abs=0.02)
    assert abs(_moments(out[0].astype(float))[2]) < 0.03  # the slant is gone
    assert np.array_equal(out[1], upright)  # nothing to straighten or to move
    assert _moments(out[0].astype(float))[:2] == pytest.approx((14, 14), abs=0.3)  # centred
    assert not out[2].any()  # a blank image stays blank
    with pytest.raises(ValueError, match="grayscale"):
        represent.deskew(np.zeros((1, 32, 32, 3), np.uint8))


def test_multiscale_hog_concatenates_equal_weight_scales():
    imgs = np.random.default_rng(1).integers(0, 256, (3, 28, 28, 1), dtype=np.uint8)
    f = represent.hog_features(imgs, cells=[4, 7])
    one, two = represent.hog_features(imgs, cells=4), represent.hog_features(imgs, cells=7)
    assert f.shape == (3, one.shape[1] + two.shape[1])
    assert np.allclose(f, np.hstack([one, two]) / math.sqrt(2), atol=1e-6)
    assert np.array_equal(represent.hog_features(imgs, cells=[4]), one)


def test_cluster_purity_against_hand_counts():
    clusters = np.array([0, 0, 0, 1, 1, 5, 5, 5, 5])
    labels = np.array([2, 2, 1, 0, 1, 3, 3, 3, 0])
    assert rknn.cluster_purity(clusters, labels) == pytest.approx((2 + 1 + 3) / 9)
    assert rknn.cluster_purity(np.arange(4), np.array([0, 1, 2, 3])) == 1.0
    assert rknn.cluster_purity(np.zeros(4, int), np.array([0, 1, 1, 1])) == 0.75


def test_membership_weights_match_umap_learn():
    from umap.umap_ import smooth_knn_dist

    d = np.sort(np.random.default_rng(2).uniform(0.5, 3.0, (50, 15)), axis=1)
    sigmas, rhos = smooth_knn_dist(d.astype(np.float32), 15.0, local_connectivity=1.0)
    theirs = np.exp(-np.maximum(d - rhos[:, None], 0) / sigmas[:, None])
    assert np.allclose(theirs[:, 1:].sum(1), math.log2(15), rtol=1e-3)  # umap-learn's own target
    ours = represent.membership_weights(d**2)  # squared distances, as faiss returns them
    assert np.allclose(ours, theirs / theirs.sum(1, keepdims=True), atol=1e-4)
    same = represent.membership_weights(np.ones((2, 5)))
    assert np.allclose(same, 0.2)  # equidistant neighbours weigh the same


def _blobs(n, seed, spread=6.0):
    g = np.random.default_rng(seed)
    centers = np.eye(3, 20) * spread
    y = np.arange(n) % 3
    return (centers[y] + g.normal(size=(n, 20))).astype(np.float32), y


@pytest.fixture(scope="module")
def fitted_umap(tmp_path_factory):
    x, y = _blobs(240, 0)
    settings = {"n_components": 2, "n_neighbors": 10, "min_dist": 0.0}
    reducer = represent.fit_umap(x, settings, 7)
    path = tmp_path_factory.mktemp("umap") / "encoder.pt"
    represent.save_umap(reducer, x, settings, path)
    from pipelib.train.checkpoint import load_torch

    return load_torch(path), x, y, reducer


def test_umap_encoder_is_deterministic_and_returns_the_fitted_public_coordinates(fitted_umap):
    state, x, _, reducer = fitted_umap
    assert np.array_equal(represent.umap_embed(state, x), reducer.embedding_)
    again = represent.fit_umap(x, {"n_components": 2, "n_neighbors": 10, "min_dist": 0.0}, 7)
    assert np.array_equal(again.embedding_, reducer.embedding_)


@pytest.mark.parametrize("transform", ["neighbours", "umap"])
def test_umap_transform_places_new_records_in_their_blob(fitted_umap, transform):
    state, x, y, _ = fitted_umap
    new, y_new = _blobs(60, 1)
    out = represent.umap_embed({**state, "transform": transform}, new)
    centers = np.stack([state["embedding"][y == c].mean(0) for c in range(3)])
    nearest = ((out[:, None] - centers[None]) ** 2).sum(-1).argmin(1)
    assert out.shape == (60, 2) and (nearest == y_new).mean() == 1.0
    assert represent.umap_embed(state, new[:0]).shape == (0, 2)


def test_umap_chain_embeds_through_its_base_encoder(tmp_path):
    imgs = np.random.default_rng(3).integers(0, 256, (40, 28, 28, 1), dtype=np.uint8)
    base = {"kind": "hog", "cells": [4, 7], "deskew": True}
    settings = {"kind": "umap", "input": "h", "n_components": 3, "n_neighbors": 5, "min_dist": 0.0, "base": base}
    features = represent.embed_images(imgs, base, [], "cpu")
    represent.save_umap(represent.fit_umap(features, settings, 0), features, settings, tmp_path / "u.pt")
    public = represent.embed_images(imgs, settings, [tmp_path / "u.pt"], "cpu")
    party = represent.embed_images(imgs[:5][:, ::-1].copy(), settings, [tmp_path / "u.pt"], "cpu")
    assert public.shape == (40, 3) and party.shape == (5, 3) and np.isfinite(party).all()


def test_scan_loss_closed_forms():
    c, w = 4, 5.0
    uniform = torch.zeros(6, c)  # p = 1/C everywhere: consistency log C, negative entropy -log C
    assert represent.scan_loss(uniform, w).item() == pytest.approx(math.log(c) - w * math.log(c), rel=1e-5)
    one_hot = torch.eye(c).repeat(2, 1) * 50  # each anchor's neighbour in its own cluster, clusters balanced
    assert represent.scan_loss(one_hot, w).item() == pytest.approx(-w * math.log(c), abs=1e-4)
    crossed = torch.cat([torch.eye(c), torch.eye(c).roll(1, 0)]) * 50  # neighbours disagree
    assert represent.scan_loss(crossed, w) > represent.scan_loss(one_hot, w) + 10


def test_mined_neighbours_exclude_the_row_itself():
    x, _ = _blobs(60, 4)
    nn_ = represent.mine_neighbours(x, 5)
    assert nn_.shape == (60, 5) and not (nn_ == np.arange(60)[:, None]).any()


def test_scan_head_clusters_separated_blobs_and_is_deterministic(tmp_path):
    x, y = _blobs(240, 5, spread=12.0)
    settings = {"clusters": 3, "neighbours": 5, "hidden": 32, "dropout": 0.1, "epochs": 30, "selflabel_epochs": 2}
    settings |= {"threshold": 0.9, "entropy_weight": 5.0, "batch": 64, "lr": 0.01}
    from pipelib.train import loop

    head = represent.train_scan(x, settings, loop.seed_everything(3))
    p = represent.scan_embed(head, x)
    assert p.shape == (240, 3) and np.allclose(p.sum(1), 1, atol=1e-5)
    assert rknn.cluster_purity(p.argmax(1), y) == 1.0
    again = represent.scan_embed(represent.train_scan(x, settings, loop.seed_everything(3)), x)
    assert np.array_equal(p, again)
    from pipelib.train.supervised import save_state

    save_state(tmp_path / "scan.pt", {"kind": "scan", **head.spec}, head)
    assert np.array_equal(represent.scan_embed(represent.load_scan(tmp_path / "scan.pt"), x), p)


def test_scan_chain_embeds_through_its_base_encoder(tmp_path):
    from pipelib.train import loop
    from pipelib.train.supervised import save_state

    imgs = np.random.default_rng(6).integers(0, 256, (40, 28, 28, 1), dtype=np.uint8)
    base = {"kind": "hog", "cells": 4}
    settings = {"kind": "scan", "input": "hog", "clusters": 4, "neighbours": 3, "hidden": 8, "dropout": 0.1}
    settings |= {"epochs": 2, "selflabel_epochs": 1, "threshold": 0.5, "entropy_weight": 2.0, "batch": 16, "lr": 0.01}
    settings["base"] = base
    head = represent.train_scan(represent.embed_images(imgs, base, [], "cpu"), settings, loop.seed_everything(0))
    save_state(tmp_path / "scan.pt", {"kind": "scan", **head.spec}, head)
    party = represent.embed_images(imgs[:5], settings, [tmp_path / "scan.pt"], "cpu")
    assert party.shape == (5, 4) and np.allclose(party.sum(1), 1, atol=1e-5)
