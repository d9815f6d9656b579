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

    def __init__(self):
        self.calls = []

    def __call__(self, arch, shape, batch, group=1):
        self.calls.append((arch, tuple(shape), batch, group))
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


def test_each_stage_is_timed_at_its_own_methods_device_and_threads(tmp_path):
    """A stage's work is timed on its method's device (pipelib.stages: the config section a rule trains with)
    at its jobs' threads; the wall time spreads each stage over the cores at its own threads, and the CPU
    stop weighs only the stages that train on the CPU."""
    from pipelib import stages

    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    trains = [rule for rule, s in stages.stages().items() if s.work is not None]
    wc = {"teacher": "pate-T8-q40", "scenario": "ldpdl_mnist"}
    sections = {rule: stages.settings_section(rule, wc) for rule in trains}
    assert all(section in config and "device" in config[section] for section in sections.values()), sections
    assert sections["ldpdl_student"] == sections["distill_student"] == "ldpdl" and sections["fedmd"] == "fedmd"
    assert stages.settings_section("distill_student", {"teacher": "rknn-hog-s20-k1"}) == "rknn"

    runs = {**config, "scenarios": scenarios(config)}
    train = ("pretrain", {"public": "mnist", "arch": config["fedmd"]["architectures"][0], "n_classes": 16}, 3)
    p = plan.make_plan([train], runs, str(tmp_path), cores=6, throughput=FakeThroughput())
    assert p.stages["pretrain"][4:] == ["cpu", 3]  # the job's own threads
    assert p.wall_seconds == pytest.approx(p.stages["pretrain"][2] / 2 + 2.0 / (6 // config["fedmd"]["threads"]))

    mixed = plan.Plan(
        {"a": [1, 10, 100.0, False, "cuda", 1], "b": [1, 10, 50.0, False, "cpu", 2]}, "cuda", "x", 4, 2, (2, 10.0)
    )
    assert mixed.wall_seconds == pytest.approx(100 / 4 + 50 / 2 + 10 / 2)
    assert mixed.cpu_wall_seconds == pytest.approx(50 / 2)  # a GPU run's start-ups are not the CPU's work
    assert plan.cpu_too_long(mixed, 20 / 3600) and not plan.cpu_too_long(mixed, 30 / 3600)


def test_fedmd_rows_are_timed_on_the_steps_they_take(monkeypatch):
    """FedMD's parties replay CUDA graphs on a GPU (issue 56): the plan times their stages' steps that way
    (warm-up and capture first, then replays), and keeps those figures apart from eager ones."""
    import torch

    from pipelib import stages
    from pipelib.train import loop

    assert [
        r for r in ("pretrain", "fedmd", "fedmd_budget", "fedmd_ablation", "centralized") if stages.captured(r)
    ] == [
        "fedmd",
        "fedmd_budget",
        "fedmd_ablation",
    ]
    calls = {"eager": [], "_captured": []}
    for name, arg in (("eager", lambda a: len(a)), ("_captured", lambda a: a)):
        original = getattr(loop.CapturedSteps, name)
        spy = lambda self, a, original=original, name=name, arg=arg: calls[name].append(arg(a)) or original(self, a)  # noqa: E731
        monkeypatch.setattr(loop.CapturedSteps, name, spy)
    monkeypatch.setenv("PIPELIB_CUDA_GRAPHS", "static")  # the captured path's bookkeeping, on the CPU
    threads = torch.get_num_threads()
    try:
        graphed = plan.Throughput(torch.device("cpu"), 1, cache=None, graph=True)
        seconds = plan.measure("cnn2-4-8-d0.1", (1, 16, 16), torch.device("cpu"), batches=(4, 8), graph=True)
        eager = plan.Throughput("cpu", 1, cache=None)
    finally:
        loop.set_graphs("off", "cpu")
        torch.set_num_threads(threads)
    assert len(seconds) == 2 and all(s > 0 for s in seconds)
    # per batch size: the warm-up fit's eager steps and one capture; the timed fit only replays
    w = loop.CapturedSteps.WARMUP
    assert calls == {"eager": [4] * w + [8] * w, "_captured": [4, 8]}
    assert graphed.prefix.endswith("|graphs static") and "graphs" not in eager.prefix


def test_models_stepped_together_are_timed_as_their_vmap_group(tmp_path):
    """PATE's own CNN teachers train ``scratch.group`` at a time in one vmap call, which steps slower per image
    than one model (issue 50's stage: 2.4x): the plan times their epochs as such a group, measured once per
    machine (:func:`pipelib.plan.measure_group`), and their scoring pass as one model's."""
    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    runs = {**config, "scenarios": scenarios(config)}
    fake = FakeThroughput()
    plan.make_plan([("ldpdl_teachers", {"scenario": "ldpdl_mnist", "design": "S8"})], runs, str(tmp_path), 2, fake)
    s = runs["ldpdl"]["pate"]["scratch"]
    assert fake.calls == [(s["arch"], (1, 28, 28), s["batch"], 8), (s["arch"], (1, 28, 28), 1024, 1)]
    import torch

    rate = plan.Throughput(torch.device("cpu"), 1, cache=None)
    assert rate(s["arch"], (1, 28, 28), s["batch"], 8) > 0
    assert [k.split("|")[-1] for k in rate.known] == ["group 8"]  # measured as a group, not as one model
