"""NFDP accountants (paper 002 Theorems 1-2, Lemma 1) against closed forms, the paper's printed
numbers, exact enumeration of the sampling mechanism, and simulation of our sampler."""

import itertools
import math

import numpy as np
import pytest

from pipelib import privacy
from pipelib.privacy import nfdp as nfdp_mod
from pipelib.privacy.nfdp import WITH_REPLACEMENT as WR
from pipelib.privacy.nfdp import WITHOUT_REPLACEMENT as WOR
from pipelib.privacy.nfdp import EpsDelta, draw, epsilon_log10, max_k, nfdp
from pipelib.vocab import SAMPLINGS


@pytest.mark.parametrize("n,k", [(1, 1), (2, 1), (300, 16), (300, 300), (2880, 60), (10**6, 3)])
def test_theorem1_closed_form(n, k):
    g = nfdp(n, k, WOR)
    assert g.epsilon == pytest.approx(math.log((n + 1) / (n + 1 - k)), rel=1e-12)
    assert g.delta == pytest.approx(k / n, rel=1e-15)


@pytest.mark.parametrize("n,k", [(1, 1), (2, 5), (300, 16), (300, 300), (2880, 2880), (10**6, 3)])
def test_theorem2_closed_form(n, k):
    g = nfdp(n, k, WR)
    assert g.epsilon == pytest.approx(k * math.log((n + 1) / n), rel=1e-12)
    assert g.delta == pytest.approx(1 - ((n - 1) / n) ** k, rel=1e-9, abs=1e-300)


def test_known_values():
    # n = 300, k = 60 without replacement: ln(301/241) and 0.2
    g = nfdp(300, 60, WOR)
    assert g.epsilon == pytest.approx(0.22232, abs=1e-5) and g.delta == 0.2
    assert nfdp(1, 1, WR) == EpsDelta(math.log(2), 1.0)
    assert nfdp(50, 0, WR) == EpsDelta(0.0, 0.0)


# Paper 002, Table 2 (printed). Its epsilon column uses log10 (see privacy module docstring), its
# delta column is Theorem 2's. The printed k=16 rows equal k=18 exactly; we test that too.
PAPER_TABLE2 = [  # (n, k behind the numbers, printed epsilon, printed delta)
    (2880, 18, 0.0027, 0.0062),
    (2880, 60, 0.0090, 0.0206),
    (2880, 300, 0.0452, 0.0989),
    (2880, 2880, 0.4342, 0.6321),
    (300, 18, 0.0260, 0.0583),
    (300, 60, 0.0867, 0.1815),
    (300, 120, 0.1734, 0.3301),
    (300, 300, 0.4336, 0.6327),
]


@pytest.mark.parametrize("n,k,eps,delta", PAPER_TABLE2)
def test_paper_table2_values_are_log10_theorem2(n, k, eps, delta):
    assert epsilon_log10(n, k, WR) == pytest.approx(eps, abs=1e-4)
    assert nfdp(n, k, WR).delta == pytest.approx(delta, abs=1.5e-4)


def test_paper_k16_rows_do_not_match_k16():
    assert epsilon_log10(2880, 16, WR) == pytest.approx(0.00241, abs=1e-5)  # printed 0.0027
    assert nfdp(300, 16, WR).delta == pytest.approx(0.0520, abs=1e-4)  # printed 0.0583


def test_lemma1_with_replacement_never_less_private():
    for n in list(range(1, 60)) + [299, 300, 2880]:
        for k in range(1, n + 1):
            wr, wor = nfdp(n, k, WR), nfdp(n, k, WOR)
            assert wr.epsilon <= wor.epsilon + 1e-15, (n, k)
            assert wr.delta <= wor.delta + 1e-15, (n, k)


def _hockey_stick(p, q, eps):
    """Tight delta(eps) = sum_o max(0, p(o) - e^eps q(o)) over outcomes o."""
    return sum(max(0.0, p.get(o, 0.0) - math.exp(eps) * q.get(o, 0.0)) for o in set(p) | set(q))


def _wor_outputs(records, k):
    subsets = list(itertools.combinations(records, k))
    return {s: 1 / len(subsets) for s in subsets}


def _wr_outputs(records, k):
    seqs = list(itertools.product(records, repeat=k))
    return {s: 1 / len(seqs) for s in seqs}


@pytest.mark.parametrize("sampling,outputs", [(WOR, _wor_outputs), (WR, _wr_outputs)])
@pytest.mark.parametrize("n,k", [(3, 1), (4, 2), (5, 3), (6, 2)])
def test_guarantee_holds_for_the_sampling_mechanism_exactly(sampling, outputs, n, k):
    """Enumerate every output of sampling from D (n records) and D + {u}: the theorem's
    (epsilon, delta) must bound the exact privacy loss in both directions."""
    d, d_plus = list(range(n)), list(range(n)) + ["u"]
    g = nfdp(n, k, sampling)
    p, q = outputs(d, k), outputs(d_plus, k)
    assert _hockey_stick(p, q, g.epsilon) <= g.delta + 1e-12
    assert _hockey_stick(q, p, g.epsilon) <= g.delta + 1e-12


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("n,k", [(50, 10), (20, 20), (200, 3)])
def test_monte_carlo_inclusion_probability_equals_delta(sampling, n, k):
    """delta is exactly the chance that a given record is in the sample; simulate our sampler."""
    gen = np.random.default_rng(1234)
    trials = 20000
    hits = sum(0 in draw(n, k, sampling, gen) for _ in range(trials))
    delta = nfdp(n, k, sampling).delta
    sd = math.sqrt(max(delta * (1 - delta), 1e-12) / trials)
    assert abs(hits / trials - delta) <= 5 * sd + 1e-12


def test_draw_sizes_and_errors():
    gen = np.random.default_rng(0)
    s = draw(10, 10, WOR, gen)
    assert sorted(s) == list(range(10))
    assert len(draw(3, 7, WR, gen)) == 7
    with pytest.raises(ValueError, match="k=11.*n=10"):
        draw(10, 11, WOR, gen)


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("n", [1, 2, 7, 300, 2880])
@pytest.mark.parametrize("eps,delta", [(0.01, 0.01), (0.1, 0.2), (1.0, 0.5), (0.05, 1.0), (10.0, 0.05)])
def test_max_k_is_largest_k_meeting_target(sampling, n, eps, delta):
    k = max_k(n, eps, delta, sampling)
    g = nfdp(n, k, sampling)
    assert g.epsilon <= eps and g.delta <= delta
    if sampling == WR or k < n:
        g1 = nfdp(n, k + 1, sampling)
        assert g1.epsilon > eps or g1.delta > delta


def test_max_k_on_exact_boundary():
    # delta = k/n exactly reachable: k = 60 of n = 300 at delta 0.2 and a loose epsilon
    assert max_k(300, 1.0, 0.2, WOR) == 60
    eps60 = nfdp(300, 60, WR).epsilon
    assert max_k(300, eps60, 1.0, WR) == 60


def test_vacuous_flag():
    assert nfdp_mod.ledger_extras(300, 1, WR)["delta_vacuous"]  # delta = 1/n exactly
    assert nfdp_mod.ledger_extras(300, 16, WOR)["delta_vacuous"]
    assert not privacy.delta_vacuous(1e-6, 300)


def test_guarantee_record_of_a_sample():
    g = nfdp_mod.guarantee(300, 60, WR)
    assert (g.epsilon, g.delta) == tuple(nfdp(300, 60, WR)) and g.releases == 1
    assert g.accountant == "paper 002 Theorem 2" and g.adjacency == privacy.Adjacency.REPLACE_ONE
    assert privacy.Guarantee.from_row(g.row()) == g


@pytest.mark.parametrize(
    "args,match",
    [
        ((0, 1, WR), "positive integer"),
        ((10, -1, WR), "non-negative"),
        ((10, 11, WOR), "k <= n"),
        ((10, 1, "poisson"), "unknown sampling"),
    ],
)
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        nfdp(*args)


def test_max_k_bad_target():
    with pytest.raises(ValueError, match="target"):
        max_k(10, -1, 0.1, WR)
    with pytest.raises(ValueError, match="no largest k"):
        max_k(10, math.inf, 1.0, WR)


# ----------------------------------------------------------------- adjacency: what the ledger assumes


def _replace_one(records, k, outputs):
    """Output distributions of sampling from D and from D with its first record replaced by 'v'."""
    return outputs(records, k), outputs(["v", *records[1:]], k)


@pytest.mark.parametrize("sampling,outputs", [(WOR, _wor_outputs), (WR, _wr_outputs)])
@pytest.mark.parametrize("n,k", [(3, 1), (4, 2), (5, 3), (6, 2), (4, 4)])
def test_guarantee_holds_under_replace_one_both_directions(sampling, outputs, n, k):
    """The ledger publishes n, so it declares replace-one adjacency: D and D with one record replaced,
    both of size n.  Only outputs holding the replaced record differ; their mass is exactly delta."""
    p, q = _replace_one(list(range(n)), k, outputs)
    g = nfdp(n, k, sampling)
    assert _hockey_stick(p, q, g.epsilon) <= g.delta + 1e-12
    assert _hockey_stick(q, p, g.epsilon) <= g.delta + 1e-12
    assert _hockey_stick(p, q, 0.0) == pytest.approx(g.delta)  # even (0, delta)-DP, and no better


@pytest.mark.parametrize("sampling,outputs", [(WOR, _wor_outputs), (WR, _wr_outputs)])
@pytest.mark.parametrize("n,k", [(3, 1), (4, 2), (5, 3), (6, 2)])
def test_guarantee_holds_for_d_against_d_minus_a_record(sampling, outputs, n, k):
    """Add/remove the other way round: D (the party's n records) against D without one of them."""
    d, d_minus = list(range(n)), list(range(1, n))
    g = nfdp(n, k, sampling)
    p, q = outputs(d, k), outputs(d_minus, k)
    assert _hockey_stick(p, q, g.epsilon) <= g.delta + 1e-12
    assert _hockey_stick(q, p, g.epsilon) <= g.delta + 1e-12


@pytest.mark.parametrize("sampling,outputs", [(WOR, _wor_outputs), (WR, _wr_outputs)])
def test_no_finite_epsilon_below_delta(sampling, outputs):
    """Below the sample's delta no epsilon holds: the outputs holding a record are impossible without it."""
    n, k = 5, 2
    g = nfdp(n, k, sampling)
    p, q = outputs(list(range(n)), k), outputs(list(range(1, n)), k)
    assert _hockey_stick(p, q, 50.0) == pytest.approx(g.delta)  # whatever epsilon: delta stays
    record = nfdp_mod.guarantee(n, k, sampling)
    assert record.adjacency == privacy.Adjacency.REPLACE_ONE and record.curve == privacy.THRESHOLD
    assert record.epsilon_at(g.delta) == g.epsilon and record.epsilon_at(g.delta * 0.999) == math.inf
    assert record.epsilon_at(1e-5) == math.inf


def test_epsilon_at_a_reference_delta_for_every_curve():
    from pipelib.privacy import gaussian, laplace, local

    assert laplace.guarantee(0.1, 1).epsilon_at(1e-5) == 0.1  # pure DP: the same epsilon at any delta
    assert local.guarantee("rr", 0.4).epsilon_at(1e-9) == 0.4
    assert privacy.NO_PRIVACY.epsilon_at(1e-5) == math.inf
    g = gaussian.guarantee(915.0, 10000, 0.0431)
    assert g.epsilon_at(0.0431) == pytest.approx(g.epsilon)
    assert g.epsilon < g.epsilon_at(1e-5) < math.inf  # smaller delta, larger epsilon
    row = privacy.with_reference_delta(g.row(), 1e-5)
    assert row["delta_ref"] == 1e-5 and row["epsilon_at_delta_ref"] == g.epsilon_at(1e-5)


# ------------------------------------------------ class-stratified draws (the FedMD loop ablation's option)


def _stratified_outputs(classes: dict, k: int) -> dict:
    """Exact output distribution of the stratified sampler (ordered per class, classes in sorted order; the
    allocation's random pick is enumerated too): ``classes`` maps a label to its records."""
    labels = sorted(classes)
    base, extra = divmod(k, len(labels))
    out: dict = {}
    picks = list(itertools.combinations(range(len(labels)), extra))
    for pick in picks:
        shares = [base + (i in pick) for i in range(len(labels))]
        per_class = [list(itertools.product(classes[c], repeat=m)) for c, m in zip(labels, shares)]
        combos = list(itertools.product(*per_class))
        for combo in combos:
            out[combo] = out.get(combo, 0.0) + 1 / (len(picks) * len(combos))
    return out


@pytest.mark.parametrize(
    "sizes,k", [((2, 3), 2), ((2, 3), 3), ((3, 2, 2), 4), ((4, 3), 5), ((1, 3), 3), ((3, 3, 3), 3)]
)
def test_stratified_guarantee_holds_for_every_replacement_within_a_class(sizes, k):
    """Enumerate every output of the stratified sampler (allocation included) on D and on D with one record
    replaced by another of its class, for every class: the worst class's Theorem-2 guarantee bounds both
    directions, and it is attained (no slack hides a wrong k_c or n_c)."""
    d = {c: [f"{c}{i}" for i in range(n)] for c, n in enumerate(sizes)}
    g = nfdp_mod.stratified(sizes, k)
    worst = 0.0
    for c in d:
        replaced = {**d, c: ["new", *d[c][1:]]}
        p, q = _stratified_outputs(d, k), _stratified_outputs(replaced, k)
        assert _hockey_stick(p, q, g.epsilon) <= g.delta + 1e-12
        assert _hockey_stick(q, p, g.epsilon) <= g.delta + 1e-12
        worst = max(worst, _hockey_stick(p, q, 0.0))
    if k % len(sizes) == 0:  # every class gets exactly k / C draws: the smallest class's delta is attained
        assert worst == pytest.approx(g.delta)
    else:
        assert worst <= g.delta + 1e-12


def test_stratified_guarantee_closed_form():
    """ceil(k / C) draws from the smallest class: k = 16 over six classes of 45-59 records, and the classes a
    party lacks do not count."""
    g = nfdp_mod.stratified([45, 59, 53, 47, 48, 48], 16)
    assert tuple(g) == tuple(nfdp(45, 3, WR))
    assert tuple(nfdp_mod.stratified([0, 50, 50], 4)) == tuple(nfdp(50, 2, WR))
    assert nfdp_mod.stratified([50] * 6, 16).epsilon > nfdp(300, 16, WR).epsilon  # weaker than unstratified
    record = nfdp_mod.stratified_guarantee([50] * 6, 18)
    assert record.adjacency == privacy.Adjacency.REPLACE_ONE and "of its class" in record.unit
    with pytest.raises(ValueError, match="at least one record"):
        nfdp_mod.stratified([0, 0], 3)


def test_stratified_draw_takes_each_class_its_share():
    labels = np.repeat([0, 1, 2, 3, 4, 5], [45, 59, 53, 47, 48, 48])
    gen = np.random.default_rng(7)
    for _ in range(200):
        rows = nfdp_mod.draw_stratified(labels, 16, gen)
        counts = np.bincount(labels[rows], minlength=6)
        assert len(rows) == 16 and sorted(counts) == [2, 2, 3, 3, 3, 3]
    shares = nfdp_mod.allocation([3, 1, 2], 7, np.random.default_rng(0))
    assert sum(shares.values()) == 7 and sorted(shares.values()) == [2, 2, 3]


def test_stratified_inclusion_probability_is_the_class_delta():
    """Simulate the sampler: a record of the smallest class is drawn with probability delta (all classes
    equal shares when C divides k)."""
    labels = np.repeat([0, 1, 2], [10, 20, 30])
    gen = np.random.default_rng(99)
    trials = 20000
    hits = sum(0 in nfdp_mod.draw_stratified(labels, 6, gen) for _ in range(trials))
    delta = nfdp_mod.stratified([10, 20, 30], 6).delta
    assert abs(hits / trials - delta) <= 5 * math.sqrt(delta * (1 - delta) / trials)
