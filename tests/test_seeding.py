"""Mechanism randomness: keyed by everything that identifies a release, or drawn from the OS."""

import numpy as np
import pytest

from pipelib.job import Job
from pipelib.methods import distill
from pipelib.seeding import release_key, release_rng

RELEASE = {"scenario": "rknn_mnist", "teacher": "rknn-simclr-s40-k1", "cmech": "laplace-eps0.1"}


def draws(seed=0, randomness="seeded", rule="distill_curate", release=RELEASE):
    return release_rng(seed, randomness, rule, release).random(8)


def test_same_release_same_draws_whatever_the_order_of_its_fields():
    assert (draws() == draws(release=dict(reversed(list(RELEASE.items()))))).all()
    assert release_key("r", {"a": 1, "b": 2}) == release_key("r", {"b": "2", "a": "1"})


@pytest.mark.parametrize("field", list(RELEASE))
def test_releases_differing_in_any_field_never_share_a_draw(field):
    other = {**RELEASE, field: RELEASE[field] + "x"}
    assert not np.isin(draws(), draws(release=other)).any()


def test_seed_and_rule_key_the_draws_too():
    assert not np.isin(draws(), draws(seed=1)).any()
    assert not np.isin(draws(), draws(rule="distill_release")).any()


def test_entropy_mode_draws_differ_every_time_and_bad_modes_fail():
    assert not np.isin(draws(randomness="entropy"), draws(randomness="entropy")).any()
    with pytest.raises(ValueError, match="unknown randomness"):
        draws(randomness="secret")


def test_two_curated_rows_of_one_scenario_get_independent_noise(tmp_path):
    """The reported leak: the MNIST simclr and hog rows at the same s and epsilon shared their Laplace
    noise, so the difference of the two noisy matrices was the difference of the raw votes."""
    counts = np.zeros((40, 10), dtype=np.int64)
    counts[:, 0] = 100
    answers = tmp_path / "party-0.npy"
    np.save(answers, counts)
    noise = {}
    for encoder in ("simclr", "hog"):
        release = {**RELEASE, "teacher": f"rknn-{encoder}-s40-k1"}
        out = tmp_path / f"{encoder}.npy"
        distill.curate(
            Job(
                rule="distill_curate",
                release=release,
                input={"answers": [str(answers)]},
                output={"release": str(out), "guarantee": str(tmp_path / f"{encoder}.json")},
            )
        )
        noise[encoder] = np.load(out) - counts
    assert np.abs(noise["simclr"] - noise["hog"]).min() > 0  # no cell shares its noise
