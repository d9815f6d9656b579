"""LDP-FL (paper 001): the weight perturbation against its closed forms and by simulation, the shuffler,
and federated averaging with vmapped clients."""

import math

import numpy as np
import pytest
import torch

from pipelib.privacy import Adjacency, registry, twopoint, weights


def test_magnitude_matches_specs_table():
    # SPECS.md 2.2: (e^eps + 1) / (e^eps - 1) at eps 0.1, 0.5, 1, 2, 5
    for eps, printed in [(0.1, 20.017), (0.5, 4.083), (1, 2.164), (2, 1.313), (5, 1.014)]:
        assert weights.magnitude(eps) == pytest.approx(printed, abs=6e-4)
        assert weights.magnitude(eps) == pytest.approx((math.exp(eps) + 1) / (math.exp(eps) - 1))
    with pytest.raises(ValueError, match="epsilon > 0"):
        weights.magnitude(0.0)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_ratio_of_output_probabilities_is_exactly_e_eps(eps):
    c, r = 0.02, 0.075
    grid = torch.linspace(c - r, c + r, 2001, dtype=torch.float64)
    hi = weights.prob_high(grid, c, r, eps)
    lo = 1 - hi
    assert (hi > 0).all() and (lo > 0).all()
    for p in (hi, lo):
        worst = float(p.max() / p.min())
        assert worst <= math.exp(eps) * (1 + 1e-12) and worst == pytest.approx(math.exp(eps), rel=1e-12)


def test_clipping_keeps_the_ratio_for_weights_outside_the_range():
    g = torch.Generator().manual_seed(0)
    w = torch.tensor([-5.0, 5.0] * 50_000)
    bits = twopoint.perturb_bits(w, 0.0, 1.0, 1.0, g)
    # a weight far outside is clipped to the range's end: Pr[high] = 1/2 +- tanh(eps/2)/2
    expect = 0.5 + 0.5 * math.tanh(0.5)
    assert float(bits[1::2].float().mean()) == pytest.approx(expect, abs=0.01)
    assert float(bits[0::2].float().mean()) == pytest.approx(1 - expect, abs=0.01)


def test_a_nan_weight_is_a_fair_coin_so_every_input_keeps_the_ratio():
    """A diverged client's NaN weight: before, it compared false and always gave the low value, which no
    weight in the box can (Pr[high] >= 1/(e^eps + 1)), an unbounded ratio; now it is the centre's fair coin."""
    eps, g, n = 1.0, torch.Generator().manual_seed(3), 200_000
    inputs = [float("nan"), float("inf"), -float("inf"), 0.2 - 0.5, 0.2 + 0.5]  # NaN, +-inf, the box's ends
    shares = [float(twopoint.perturb_bits(torch.full((n,), v), 0.2, 0.5, eps, g).float().mean()) for v in inputs]
    expected = [0.5, math.exp(eps) / (math.exp(eps) + 1), 1 / (math.exp(eps) + 1)]  # centre, clipped ends
    assert shares[:3] == pytest.approx(expected, abs=0.005)
    assert shares[1] == pytest.approx(shares[4], abs=0.005) and shares[2] == pytest.approx(shares[3], abs=0.005)
    # every pair of inputs, NaN and inf included, keeps both outputs' ratio within e^eps (simulated shares)
    for p in (torch.tensor(shares), 1 - torch.tensor(shares)):
        assert float(p.max() / p.min()) <= math.exp(eps) * 1.03
    mixed = twopoint.perturb_bits(torch.tensor([float("nan"), 5.0]), 0.0, 1.0, eps, g)
    assert mixed.dtype == torch.bool and mixed.shape == (2,)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_unbiased_with_the_exact_variance_by_simulation(eps):
    c, r, trials = 0.0, 0.075, 200_000
    g = torch.Generator().manual_seed(1)
    for w0 in (-0.075, -0.03, 0.0, 0.05, 0.075):
        w = torch.full((trials,), w0)
        out = twopoint.values(twopoint.perturb_bits(w, c, r, eps, g), c, r, eps).double()
        var = weights.variance(w0, c, r, eps)
        assert float(out.mean()) == pytest.approx(w0, abs=5 * math.sqrt(var / trials))  # Lemma 1
        assert float(out.var()) == pytest.approx(var, rel=0.02)
        assert var <= (r * weights.magnitude(eps)) ** 2 * (1 + 1e-12)  # Lemma 2 is an upper bound


def test_mean_variance_bounds_hold_and_the_papers_corollary_does_not():
    eps, radii = 1.0, torch.tensor([0.01, 0.05, 0.1, 0.2])
    lo, hi = weights.mean_variance_bounds(radii, eps)
    g, trials = torch.Generator().manual_seed(2), 100_000
    for at in ("center", "end"):  # weights at their range's center (largest variance) or end (smallest)
        w = torch.zeros(trials, 4) + (radii if at == "end" else 0)
        mean = twopoint.values(twopoint.perturb_bits(w, 0.0, radii, eps, g), 0.0, radii, eps).double().mean(1)
        v = float(mean.var())
        assert lo * 0.97 <= v <= hi * 1.03
        assert v == pytest.approx(hi if at == "center" else lo, rel=0.03)
        if at == "center":
            a2, s, n = weights.magnitude(eps) ** 2, float((radii.double() ** 2).sum()), 4
            paper_upper = a2 * s / n**2 - s / n**2  # Corollary 1's upper bound: the simulation exceeds it
            assert v > paper_upper * 1.1


def test_shuffled_reports_give_the_mean_and_only_each_positions_multiset():
    eps, g = 2.0, torch.Generator().manual_seed(3)
    shapes = {"w": torch.Size([3, 4]), "b": torch.Size([3])}
    c, r = {"w": 0.1, "b": 0.0}, {"w": 0.5, "b": 1.0}
    reports = twopoint.ShuffledReports(shapes, c, r, eps)
    sent = []
    for _ in range(7):
        bits = {k: torch.rand(s, generator=g) < 0.5 for k, s in shapes.items()}
        sent.append({k: twopoint.values(b, c[k], r[k], eps) for k, b in bits.items()})
        reports.add(bits)
    mean = reports.mean()
    for k in shapes:
        stacked = torch.stack([s[k] for s in sent])
        assert torch.allclose(mean[k], stacked.mean(0), atol=1e-6)
        # per position: the same multiset, in a canonical order that does not depend on the senders
        assert torch.allclose(reports.multiset(k), stacked.sort(0, descending=True).values, atol=1e-6)
    assert reports.count == 7 and set(vars(reports)) == {"c", "r", "epsilon", "high", "count"}


def test_guarantees_state_the_papers_claim_and_the_composed_one():
    mech = registry.parse("twopoint-eps5.0")
    assert mech.locality == "weights"
    per = mech.guarantee(1)
    assert (per.epsilon, per.delta, per.adjacency) == (5.0, 0.0, Adjacency.LOCAL)
    assert "one weight" in per.unit and "not composed" in per.accountant
    whole = mech.client_guarantee(1000, 3)
    assert whole.epsilon == 15000.0 and whole.releases == 3000 and "data set" in whole.unit
    assert np.isfinite(whole.epsilon_at(1e-5))


# ------------------------------------------------------------------ federated averaging

from pipelib.methods import ldpfl  # noqa: E402
from pipelib.train import local_sgd, models  # noqa: E402
from pipelib.train.models import build  # noqa: E402


def synthetic_clients(n_clients=4, per_client=40, seed=0):
    """Separable 2-class images: class 1 has a bright top half."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n_clients):
        y = torch.randint(0, 2, (per_client,), generator=g)
        x = torch.randint(0, 60, (per_client, 1, 28, 28), generator=g, dtype=torch.uint8)
        x[y == 1, :, :14] += 150
        out.append(local_sgd.Client(i, x, y))
    return out


def start_weights(model):
    return {k: v.detach().clone() for k, v in model.named_parameters()}


def test_vmapped_clients_train_exactly_like_one_after_another():
    torch.manual_seed(0)
    model = build("fedcnn-4-8-16", (1, 28, 28), 2)
    clients = synthetic_clients(3, 30)
    orders, start = local_sgd.shuffles(0, "run", 1, clients, 2), start_weights(model)
    a = local_sgd.LocalSGD(model, 0.05, 2, 8, "vmap").train(start, clients, orders)
    b = local_sgd.LocalSGD(model, 0.05, 2, 8, "loop").train(start, clients, orders)
    for k in a:
        assert a[k].shape[0] == 3 and torch.allclose(a[k], b[k], atol=1e-5)
    # a client's weights depend on its own shard only: changing another client's data leaves them alone
    other = [clients[0], local_sgd.Client(1, clients[2].x.flip(0), clients[2].y.flip(0)), clients[2]]
    c = local_sgd.LocalSGD(model, 0.05, 2, 8, "vmap").train(start, other, orders)
    assert all(torch.equal(a[k][0], c[k][0]) and torch.equal(a[k][2], c[k][2]) for k in a)
    assert max(float((a[k][1] - c[k][1]).abs().max()) for k in a) > 1e-3
    with pytest.raises(ValueError, match="equally many records"):
        local_sgd.LocalSGD(model, 0.05, 1, 8).train(start, synthetic_clients(1, 20) + [other[1]], orders)


def test_each_batch_order_is_a_permutation_of_the_clients_own_records():
    clients = synthetic_clients(2, 25)
    a, b = local_sgd.shuffles(0, "run", 3, clients, 2)
    assert sorted(a[:25].tolist()) == list(range(25)) and sorted(a[25:].tolist()) == list(range(25))
    assert not torch.equal(a, b) and torch.equal(a, local_sgd.shuffles(0, "run", 3, clients, 2)[0])


def run_fedavg(mechanism=None, ranges=(0.0, 0.5), rounds=3, group=2):
    torch.manual_seed(0)
    model = build("fedcnn-4-8-16", (1, 28, 28), 2)
    clients = synthetic_clients(4, 40)
    test = synthetic_clients(1, 200, seed=9)[0]
    server = ldpfl.Server(start_weights(model), 4, 0.75, seed=0, key="run", ranges=ranges)
    proto = ldpfl.FedAvg(
        model,
        clients,
        server,
        local_sgd.LocalSGD(model, 0.1, 1, 10, group=group),
        rounds,
        (test.x, test.y),
        privacy=(mechanism, lambda t, cid: 1000 * t + cid),
    )
    from pipelib.methods.rounds import run_rounds

    return proto, run_rounds(proto)


def test_noise_free_fedavg_learns_and_averages_the_selected_clients():
    proto, history = run_fedavg()
    assert [h["round"] for h in history] == [0, 1, 2, 3] and history[-1]["accuracy"] > 0.9
    assert proto.server.per_round == 3 and proto.joined.sum() == 9
    # one round by hand: the mean of the selected clients' locally trained weights
    p2, _ = run_fedavg(rounds=1)
    torch.manual_seed(0)
    model = build("fedcnn-4-8-16", (1, 28, 28), 2)
    chosen = [synthetic_clients(4, 40)[i] for i in p2.server.select(1)]
    trained = local_sgd.LocalSGD(model, 0.1, 1, 10).train(
        start_weights(model), chosen, local_sgd.shuffles(0, "run", 1, chosen, 1)
    )
    assert all(torch.allclose(p2.server.params[k], trained[k].mean(0), atol=1e-5) for k in trained)


def test_private_rounds_are_deterministic_and_group_size_does_not_matter():
    mech = registry.parse("twopoint-eps5.0")
    a, ha = run_fedavg(mech, "adaptive", rounds=2, group=2)
    b, hb = run_fedavg(mech, "adaptive", rounds=2, group=4)
    assert [h["accuracy"] for h in ha] == pytest.approx([h["accuracy"] for h in hb])
    assert all(torch.allclose(a.server.params[k], b.server.params[k], atol=1e-5) for k in a.server.params)
    # the next round's ranges come from the average projected onto the box the clients clipped to in round 2
    # (the ranges after round 1, the same in a one-round run: the runs are deterministic)
    box, _ = run_fedavg(mech, "adaptive", rounds=1, group=2)
    for k, v in a.server.params.items():
        c, r = ldpfl.ranges_for({k: v}, None, ({k: box.server.c[k]}, {k: box.server.r[k]}))
        assert a.server.c[k] == pytest.approx(c[k]) and a.server.r[k] == pytest.approx(r[k])
        assert a.server.r[k] <= box.server.r[k] + 1e-9  # a projected range never widens


def test_fixed_ranges_clip_weights_and_biases_to_the_same_box():
    mech = registry.parse("twopoint-eps1.0")
    proto, _ = run_fedavg(mech, (0.0, 0.05), rounds=1)
    a = weights.magnitude(1.0)
    for k, v in proto.server.params.items():  # means of 3 values c +- r a: c + (-3, -1, 1, 3) r a / 3
        levels = torch.round(v / (0.05 * a) * 3)
        assert torch.allclose(v, levels * 0.05 * a / 3, atol=1e-6), k
        assert set(levels.unique().tolist()) <= {-3, -1, 1, 3}
    s = proto.server  # the next round keeps the box for every tensor
    assert all((s.c[k], s.r[k]) == (0.0, 0.05) for k in s.params)


def test_ranges_for_fixed_adaptive_and_projected():
    params = {"conv.weight": torch.ones(2, 1, 3, 3) * 0.3, "conv.bias": torch.tensor([-1.0, 3.0])}
    assert ldpfl.ranges_for(params, (0.0, 0.1)) == (
        {"conv.weight": 0.0, "conv.bias": 0.0},
        {"conv.weight": 0.1, "conv.bias": 0.1},
    )
    c, r = ldpfl.ranges_for(params, None)
    assert c == {"conv.weight": pytest.approx(0.3), "conv.bias": 1.0} and r["conv.weight"] == ldpfl.MIN_RADIUS
    assert r["conv.bias"] == 2.0
    # projected: the average first clipped to the box the clients clipped to (bias box [0, 1])
    previous = ({"conv.weight": 0.0, "conv.bias": 0.5}, {"conv.weight": 1.0, "conv.bias": 0.5})
    c, r = ldpfl.ranges_for(params, None, previous)
    assert (c["conv.bias"], r["conv.bias"]) == (0.5, 0.5) and c["conv.weight"] == pytest.approx(0.3)


def test_a_projected_adaptive_range_stays_bounded_where_the_noisy_one_diverges():
    """Epsilon 0.1, a few clients a round: the noisy average's spread widens the range every round; the
    projected rule's range never exceeds the first round's."""
    mech = registry.parse("twopoint-eps0.1")
    torch.manual_seed(0)
    _, r0 = ldpfl.layer_ranges(start_weights(build("fedcnn-4-8-16", (1, 28, 28), 2)))
    radius = {}
    for rule in ("noisy", "projected"):
        torch.manual_seed(0)
        model = build("fedcnn-4-8-16", (1, 28, 28), 2)
        server = ldpfl.Server(start_weights(model), 4, 0.75, seed=0, key="run", ranges="adaptive", rule=rule)
        proto = ldpfl.FedAvg(
            model,
            synthetic_clients(4, 40),
            server,
            local_sgd.LocalSGD(model, 0.1, 1, 10),
            2,  # more rounds overflow the noisy rule's weights
            (synthetic_clients(1, 50, seed=9)[0].x, synthetic_clients(1, 50, seed=9)[0].y),
            privacy=(mech, lambda t, cid: 1000 * t + cid),
        )
        from pipelib.methods.rounds import run_rounds

        run_rounds(proto)
        radius[rule] = max(server.r[k] / r0[k] for k in r0)
    assert radius["projected"] <= 1.0 + 1e-9 < 100 < radius["noisy"], radius
    with pytest.raises(ValueError, match="adaptive range rule"):
        ldpfl.Server({}, 4, 0.5, seed=0, key="run", ranges="adaptive", rule="median")


def test_torch_default_init_puts_more_of_the_large_layer_inside_a_narrow_box():
    torch.manual_seed(0)
    he = build("fedcnn-32-64-512", (1, 28, 28), 10)
    torch.manual_seed(0)
    default = build("fedcnn-32-64-512", (1, 28, 28), 10)
    ldpfl.torch_default_init(default)
    models = {"he": he, "torch": default}
    inside = {name: float((m.features[-2].weight.abs() <= 0.015).float().mean()) for name, m in models.items()}
    assert inside["torch"] > 0.8 > 0.5 > inside["he"]  # issue 51: about 84 % against under half


def test_share_in_box_counts_every_value_inside_the_box():
    params = {"w": torch.tensor([[-0.02, 0.0], [0.014, 0.016]]), "b": torch.tensor([0.01, -0.014, 0.03, 0.0])}
    assert ldpfl.share_in_box(params, 0.0, 0.015) == pytest.approx(5 / 8)  # 0.016, 0.03 and -0.02 outside
    assert ldpfl.share_in_box(params, 0.01, 0.005) == pytest.approx(2 / 8)  # 0.014 and 0.01


def test_adaptive_ranges_keep_every_average_on_the_grid_of_the_ranges_broadcast_before_the_round():
    mech = registry.parse("twopoint-eps2.0")
    torch.manual_seed(0)
    c0, r0 = ldpfl.layer_ranges(start_weights(build("fedcnn-4-8-16", (1, 28, 28), 2)))  # round 1's ranges
    proto, _ = run_fedavg(mech, "adaptive", rounds=1)
    a = weights.magnitude(2.0)
    for k, v in proto.server.params.items():  # means of 3 values c +- r a: c + (-3, -1, 1, 3) r a / 3
        levels = torch.round((v - c0[k]) / (r0[k] * a) * 3)
        assert torch.allclose(v, c0[k] + levels * r0[k] * a / 3, atol=1e-5)
        assert set(levels.unique().tolist()) <= {-3, -1, 1, 3}


# ------------------------------------------------------------------ the workflow on the tiny preset

TINY_LDPFL = "results/tiny/ldpfl/ldpfl_mnist"


@pytest.mark.workflow
def test_table_ldpfl_states_both_guarantees(tiny):
    import pandas as pd

    t = pd.read_csv(tiny / "results/tiny/table_ldpfl.csv")
    assert sorted(t["range"]) == ["adaptive", "fixed", "fixed box, no coins", "none"]
    box = t[t.range == "fixed box, no coins"].iloc[0]  # noise-free, every upload clipped to the fixed box
    assert box["method"] == "FedAvg" and np.isinf(box["epsilon"]) and box["run"] == "clip-c0.0-r0.075"
    assert pd.isna(box["paper_accuracy"]) and box["init_in_box"] == t[t.range == "fixed"]["init_in_box"].iloc[0]
    free = t[t.range == "none"].iloc[0]
    assert free["paper_accuracy"] == 0.9721  # implied by the paper's introduction; Table 1 has no epsilon 8
    assert free["method"] == "FedAvg" and np.isinf(free["epsilon"]) and pd.isna(free["paper_epsilon"])
    private = t[t.method == "LDP-FL"]
    assert len(private) == 2 and (private["paper_epsilon"] == 8.0).all()
    # a client's composed guarantee: eps per weight x every weight x every round it joined (all 3 here)
    assert (private["epsilon"] == 8.0 * private["weights"] * 3).all() and (private["delta"] == 0).all()
    assert private["protected_unit"].str.contains("data set").all()
    assert private["paper_protected_unit"].str.contains("one weight").all()
    # each run's best round beside its last (the diverged flag), and the row flags column
    assert (t["peak_accuracy"] >= t["accuracy"]).all() and t["peak_round"].between(0, 3).all()
    assert "flags" in t and t.loc[t.range == "fixed", "init_in_box"].between(0, 1).all()
    # Figure 3's point of a Table 1 run carries that row's `at ceiling` flag (the box sets it)
    figure = pd.read_csv(tiny / "results/tiny/figures/p001_clients.csv")
    for r in t[t["flags"].fillna("").str.contains("at ceiling")].itertuples():
        same = figure[(figure["run"] == r.run) & (figure["scenario"] == r.scenario)]
        assert len(same) == 1 and "at ceiling" in same["flags"].iloc[0]


@pytest.mark.workflow
def test_ldpfl_ledger_has_one_row_per_client_with_the_rounds_it_joined(tiny):
    import json

    run = tiny / TINY_LDPFL / "twopoint-eps8.0-c0.0-r0.075/f0.5-m3"
    rows = json.loads((run / "releases.json").read_text())
    result = json.loads((run / "result.json").read_text())
    assert [r["party"] for r in rows] == list(range(8))
    joined = [r["rounds_joined"] for r in rows]
    assert sum(joined) == 3 * 4 and result["clients_per_round"] == 4  # f_r = 0.5 of 8 clients, 3 rounds
    for r in rows:
        assert r["epsilon"] == pytest.approx(8.0 * r["weights"] * r["rounds_joined"])
        assert r["paper_epsilon"] == 8.0 and "one weight" in r["paper_protected_unit"]
    assert result["epsilon"] == pytest.approx(8.0 * result["weights"] * max(joined))
    rounds = pd_read_parquet(run / "rounds.parquet")
    assert list(rounds["round"]) == [0, 1, 2, 3] and rounds["accuracy"].between(0, 1).all()
    # the fixed box's share of this run's initial weights (issue 52's substitute flag reads it)
    assert result["init"] == "torch" and 0 < result["init_in_box"] < 1  # the tiny fedcnn, PyTorch's default: 0.95


def pd_read_parquet(path):
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pandas()


@pytest.mark.workflow
def test_paper001_page_is_generated_from_the_table(tiny):
    import pandas as pd

    t = pd.read_csv(tiny / "results/tiny/table_ldpfl.csv")
    page = (tiny / "docs/reproduction/tiny/paper001.md").read_text()
    assert page.startswith("<!-- generated by the workflow's reproduction_page rule") and "Preset: tiny" in page
    for r in t.itertuples():
        assert f"| {r.dataset} | {r.method} | {r.range} |" in page
    printed = t[t.paper_accuracy.notna()]
    off = printed[(printed.accuracy - printed.paper_accuracy).abs() > 0.05]
    assert f"Rows more than 5 points from the paper: {len(off)} of the {len(printed)} it prints" in page
    for r in off.itertuples():  # each named with its gap
        eps = f"{r.paper_epsilon:g}"
        name = f"{r.dataset} FedAvg" if r.method == "FedAvg" else f"{r.dataset} {r.method} {r.range} eps {eps}"
        assert f"{name}: {100 * (r.accuracy - r.paper_accuracy):+.1f}" in page
    # what the fixed box costs by itself, and the coins on top of it: generated from the three rows
    box, free = t[t.range == "fixed box, no coins"].iloc[0], t[t.range == "none"].iloc[0]
    assert "What the fixed box costs by itself" in page
    assert f"- MNIST: noise-free {free.accuracy:.4g} [{free.accuracy_low:.3f}, " in page
    assert f"clipped to the fixed box {box.accuracy:.4g} [{box.accuracy_low:.3f}, " in page
    assert "the coins on top of it (the fixed-range rows): at eps 8 " in page
    for name in ("p001_clients", "p001_fraction_rounds", "p001_epsilon"):
        assert f"figures/{name}.png" in page and (tiny / f"docs/reproduction/tiny/figures/{name}.png").is_file()


def test_a_killed_run_resumes_with_identical_results(tmp_path):
    from pipelib.methods.rounds import run_rounds

    mech = registry.parse("twopoint-eps5.0")
    straight, _ = run_fedavg(mech, "adaptive", rounds=2)
    first, _ = run_fedavg(mech, "adaptive", rounds=1)  # as if killed after round 1: its checkpoint remains
    ckpt = tmp_path / "resume.pt"
    from pipelib.train.checkpoint import save_checkpoint

    save_checkpoint(ckpt, "fp", round=1, history=[], protocol=first.state())
    resumed, _ = run_fedavg(mech, "adaptive", rounds=0)  # a fresh protocol, then continued from the file
    resumed.rounds = 2
    run_rounds(resumed, ckpt, "fp")
    for k, v in straight.server.params.items():
        assert torch.equal(v, resumed.server.params[k])
    assert straight.server.r == resumed.server.r and (straight.joined == resumed.joined).all()


def test_each_clients_coins_are_keyed_by_the_run_the_round_and_the_client():
    release = {"scenario": "s", "flmech": "twopoint-eps5.0-adaptive", "frac": "1.0", "rounds": "3"}
    seeds = {(t, c): ldpfl.client_noise_seed(0, "seeded", release, t, c) for t in (1, 2) for c in (0, 1)}
    assert len(set(seeds.values())) == 4 and seeds[(1, 0)] == ldpfl.client_noise_seed(0, "seeded", release, 1, 0)
    other = {**release, "flmech": "twopoint-eps5.0-c0.0-r0.1"}
    assert ldpfl.client_noise_seed(0, "seeded", other, 1, 0) != seeds[(1, 0)]


@pytest.mark.parametrize(
    "arch,shape,want",
    [
        ("fedcnn-4-8-16", (1, 28, 28), "vmap"),
        ("fedcnn-16-32-128", (1, 28, 28), "vmap"),
        ("fedcnn-32-64-512", (1, 28, 28), "loop"),
        ("vgg-16-32-64-128", (3, 32, 32), "loop"),
        ("vgg-32-64-128-256", (3, 32, 32), "loop"),
    ],
)
def test_auto_client_training_on_a_cpu_follows_the_models_training_flops(arch, shape, want):
    model = build(arch, shape, 10)
    assert ldpfl.client_mode("auto", model, shape) == want
    assert ldpfl.client_mode("vmap", model, shape) == "vmap" and ldpfl.client_mode("loop", model, shape) == "loop"


def test_counting_a_models_flops_draws_nothing_and_changes_no_state():
    model = build("cnn2-8-16-d0.2", (1, 28, 28), 10).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(3)
    flops = models.training_flops(model, (1, 28, 28))
    after_draw = torch.rand(1)
    torch.manual_seed(3)
    assert torch.equal(after_draw, torch.rand(1)) and flops > 0 and model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())


def test_fedavg_with_clip_clips_only_what_it_names_and_is_fedavg_inside_a_wide_box():
    """The server's ``clip`` (issue 51: rule ldpfl's clip-c<c>-r<r> runs, benchmarks/ldpfl_box_cost.py's --clip):
    with a box no weight reaches it plays noise-free FedAvg exactly; with a narrow box every averaged value of
    a clipped tensor lies in it, and a tensor the pattern leaves out is averaged unclipped (it leaves the box)."""

    def one_round(box, clip=None):
        torch.manual_seed(0)
        model = build("fedcnn-4-8-16", (1, 28, 28), 2)
        test = synthetic_clients(1, 50, seed=9)[0]
        server = ldpfl.Server(start_weights(model), 4, 0.75, seed=0, key="run", ranges=box, clip=clip)
        trainer = local_sgd.LocalSGD(model, 0.1, 1, 10)
        proto = ldpfl.FedAvg(model, synthetic_clients(4, 40), server, trainer, 1, (test.x, test.y))
        proto.play(1)
        return server.params

    wide, fedavg = one_round((0.0, 100.0), ".*"), one_round((0.0, 100.0))
    assert all(torch.equal(wide[k], fedavg[k]) for k in fedavg)
    narrow = one_round((0.0, 0.01), ".*")
    assert all(float(v.abs().max()) <= 0.01 + 1e-7 for v in narrow.values())
    assert float((fedavg["classifier.weight"].abs() > 0.01).float().mean()) > 0.2  # the box binds
    convs = one_round((0.0, 0.01), r"features\.0\..*")
    assert float(convs["features.0.weight"].abs().max()) <= 0.01 + 1e-7
    assert float(convs["classifier.weight"].abs().max()) > 0.01
    model = build("fedcnn-4-8-16", (1, 28, 28), 2)
    server = ldpfl.Server(start_weights(model), 4, 0.75, seed=0, key="run", ranges=(0.0, 0.01), clip=".*")
    with pytest.raises(ValueError, match="clip rule is for noise-free runs"):
        ldpfl.FedAvg(model, [], server, None, 1, (None, None), privacy=(registry.parse("twopoint-eps5.0"), None))


def test_the_paper001_page_says_what_the_box_and_the_coins_cost_with_their_intervals():
    from pipelib.report.pages import _cost

    def row(acc, half):
        return {"accuracy": acc, "accuracy_low": acc - half, "accuracy_high": acc + half}

    assert _cost(row(0.8442, 0.007), row(0.7010, 0.009)) == "costs 14.3 points"
    assert _cost(row(0.70, 0.009), row(0.75, 0.009)) == "gains 5.0 points"
    assert (
        _cost(row(0.7010, 0.009), row(0.7013, 0.009))
        == "changes it by +0.0 points, inside the intervals (inconclusive)"
    )
