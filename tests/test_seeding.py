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


def _job(preset="reduced", **params):
    """The Job a release script builds from what Snakemake hands it (a fake ``snakemake`` object)."""
    from types import SimpleNamespace

    base = {"seed": 0, "randomness": "seeded", "code": "abc", "device": "cpu", "settings": {"rounds": 20}}
    smk = SimpleNamespace(
        params={**base, **params},
        config={"preset": preset},
        threads=1,
        rule="fedmd",
        wildcards={"scenario": "cifar_iid", "answer": "softmax", "run": "ldp-eps5-k16"},
        input={},
        output={},
    )
    smk.params = SimpleNamespace(**smk.params, get=smk.params.get, items=smk.params.items)
    return Job.of(smk)


def key_draws(job):
    return release_rng(job.seed, job.randomness, job.rule, {**job.release_id, "party": 0}).random(8)


def test_two_presets_releases_of_one_name_never_share_a_draw():
    """The same rule and wildcards under the reduced and the paper preset (or under two settings) are two
    releases: their noise differs.  Where and with which code a job runs does not re-draw it."""
    reduced, paper = _job("reduced"), _job("paper")
    assert reduced.release == paper.release and reduced.release_id != paper.release_id
    assert not np.isin(key_draws(reduced), key_draws(paper)).any()
    assert not np.isin(key_draws(reduced), key_draws(_job("reduced", settings={"rounds": 10}))).any()
    same = _job("reduced", device="cuda", code="def", precision="bf16", checkpoint="x/resume.pt")
    assert (key_draws(reduced) == key_draws(same)).all()
    assert reduced.release_id == {**reduced.release, "settings": reduced.settings} and len(reduced.settings) == 16
