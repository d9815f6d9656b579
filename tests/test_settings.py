"""pipelib.settings: the typed, frozen settings of FedMD, LDP-FL and LDP-DL, built once from the validated
config and read alike by a job (from its rule's params) and by its planned work."""

import dataclasses
from pathlib import Path

import pytest

from pipelib import work
from pipelib.config import load, scenarios, validate
from pipelib.settings import (
    FedmdSettings,
    LdpdlSettings,
    LdpflSettings,
    Schedule,
    fedmd_params,
    ldpfl_params,
)

REPO = Path(__file__).resolve().parents[1]
PRESETS = ("paper", "reduced", "tiny")


def config_of(preset: str) -> dict:
    extra = [] if preset == "paper" else [REPO / "presets" / f"{preset}.yaml"]
    return validate(load(REPO / "config.yaml", *extra))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_presets_fedmd_jobs_parse_from_their_params(preset):
    """What a rule passes (the mapping) is what its job and the planned work read (the object): every answer
    type, budget point and loop variant of the preset parses, with no key left over or unknown."""
    config = config_of(preset)
    paths = [{"answer": a} for a in ("softmax", "logits", "argmax")]
    paths += [{"answer": "softmax", "rounds": "3", "q": "70", "pe": "2"}]
    paths += [{"variant": v["name"]} for v in config["paper002"]["ablation"]["variants"]]
    for wc in paths:
        mapping = fedmd_params(config, wc)
        s = FedmdSettings.parse(mapping)
        assert s == FedmdSettings.of(config, wc)
        assert s.schedule.digest_epochs == mapping["digest_epochs"] and s.lr == mapping["lr"]
        assert s.architectures == tuple(config["fedmd"]["architectures"])


def test_a_budget_point_and_a_variant_override_the_schedule_once():
    config = config_of("tiny")
    base = FedmdSettings.of(config, {"answer": "softmax"})
    point = FedmdSettings.of(config, {"answer": "logits", "rounds": "7", "q": "123"})
    assert (point.answer, point.schedule.rounds, point.schedule.public_per_round) == ("logits", 7, 123)
    assert point.schedule.releases == 7 * 123 and point.lr == base.lr
    ablation = config["paper002"]["ablation"]
    variant = next(v for v in ablation["variants"] if "optimizers" in v)
    v = FedmdSettings.of(config, {"variant": variant["name"]})
    assert (v.schedule.rounds, v.schedule.public_per_round) == tuple(ablation["budget"][:2])
    assert v.schedule.optimizers == variant["optimizers"]


def test_settings_are_frozen_and_an_unknown_or_bad_key_is_named():
    config = config_of("tiny")
    s = FedmdSettings.of(config, {"answer": "softmax"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.lr = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.schedule.rounds = 1
    with pytest.raises(ValueError, match="fedmd: unknown setting.*schedule"):
        FedmdSettings.parse({**fedmd_params(config, {}), "schedule": {}})
    with pytest.raises(ValueError, match="fedmd: unknown setting.*digest_temperature"):
        FedmdSettings.parse({**fedmd_params(config, {}), "digest_temperature": 2.0})
    with pytest.raises(ValueError, match="optimizers = 'both'"):
        FedmdSettings.parse({**fedmd_params(config, {}), "optimizers": "both"})
    with pytest.raises(ValueError, match="ldpfl: unknown setting.*momentum"):
        LdpflSettings.parse({**ldpfl_params(config, "ldpfl_mnist"), "momentum": 0.9})


def test_fedmd_parties_cycle_the_architectures():
    s = FedmdSettings.of(config_of("paper"), {"answer": "softmax"})
    archs = s.party_archs(23)
    assert len(archs) == 23 and archs[:10] == list(s.architectures) and archs[10:20] == archs[:10]


@pytest.mark.parametrize("preset", PRESETS)
def test_ldpfl_settings_take_the_datasets_entry_over_the_sections(preset):
    config = config_of(preset)
    for entry in config["ldpfl"]["datasets"].values():
        s = LdpflSettings.of(config, entry["scenario"])
        assert s.arch == entry["arch"] and s.lr == entry["lr"]
        assert s.batch == entry.get("batch", config["ldpfl"]["batch"])
        assert s.local_epochs == entry.get("local_epochs", config["ldpfl"]["local_epochs"])
        assert LdpflSettings.parse(ldpfl_params(config, entry["scenario"])) == s


def test_ldpdl_shape_without_aqs_draws_all_queries_at_once():
    s = LdpdlSettings(200, 5, "cnn", 10, 32)
    assert s.shape("aqs") == (200, 5) and s.shape("random") == (1000, 1) and s.all_queries == 1000
    paper = LdpdlSettings.of(config_of("paper"))
    assert paper.shape("aqs") == (200, 5)  # paper 004: S = 200 queries in each of T = 5 AQS rounds


def test_the_planned_work_reads_the_same_settings_as_the_job(tmp_path):
    """The planned image-passes of a FedMD row follow its schedule: one more round adds exactly one round's
    digest, revisit and answer passes of every party."""
    config = config_of("tiny")
    sizes = work.Sizes({**config, "scenarios": scenarios(config)}, str(tmp_path))
    wc = {"scenario": "cifar_iid", "answer": "softmax", "run": "np"}
    one, two = ({**wc, "rounds": str(r), "q": "50"} for r in (1, 2))
    s = FedmdSettings.of(config, one).schedule
    ns, _ = sizes.parties("cifar_iid")
    per_round = sum(
        s.digest_epochs * 50 + s.revisit_epochs * n + work.FORWARD * (50 + sizes.test("cifar_iid")) for n in ns
    )
    assert work.fedmd(two, sizes).total - work.fedmd(one, sizes).total == pytest.approx(per_round)


def test_schedule_counts_its_releases():
    s = Schedule(20, 5000, 1, 1, 1, 1, 1, 1)
    assert s.releases == 100000 and s.predict_batch == 1024
