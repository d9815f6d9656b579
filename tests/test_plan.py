"""The run plan's time estimate: training image-passes at the measured throughput plus every job's start-up
floor (issue 32: a run of hundreds of small jobs is mostly start-up)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelib import plan
from pipelib.config import load, scenarios, validate

REPO = Path(__file__).resolve().parents[1]


class FakeThroughput:
    """1,000 images per second for every model; start-up 2 s for a training job, 0.5 s for the rest."""

    def __call__(self, arch, shape, batch):
        return 1000.0

    def floor(self, kind):
        return {"training": 2.0, "light": 0.5}[kind]


def test_the_plan_counts_every_jobs_start_up_floor(tmp_path):
    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    runs = {**config, "scenarios": scenarios(config)}
    train = ("pretrain", {"public": "mnist", "arch": config["fedmd"]["architectures"][0], "n_classes": 16})
    light = [("nfdp_ledger", {"scenario": "femnist_iid", "sampling": "with_replacement", "k": "16"})] * 10
    p = plan.make_plan([train, *light], runs, str(tmp_path), cores=2, throughput=FakeThroughput())
    passes = plan.job_work(*train, runs, str(tmp_path)).total
    assert p.floor == (11, pytest.approx(2.0 + 10 * 0.5))
    assert p.job_seconds == pytest.approx(passes / 1000.0 + 7.0)
    assert "start-up (all)" in p.table() and "11" in p.table()


def test_the_floor_is_measured_in_a_fresh_interpreter_and_a_job_without_training_does_not_import_torch():
    light, heavy = plan.measure_floor("light"), plan.measure_floor("training")
    assert 0 < light < heavy
    assert "torch" not in plan.FLOOR_IMPORTS["light"]
