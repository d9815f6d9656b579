"""Rules as data (pipelib.stages), shown by adding a toy method: a run record and a method function, registered
as one Method, are all the planner, the boundary check and the result schema need (issue 30).  The workflow
side of a new method (one rule file, one script) is the walk-through in docs/development.md."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from pipelib import boundary, plan, seeding, stages, work
from pipelib.boundary import DagJob
from pipelib.config import load, scenarios, validate
from pipelib.job import Job
from pipelib.privacy import registry
from pipelib.runs import DistillRun, PateRun, RknnRun
from pipelib.schema import RESULT_COLUMNS, result_row

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------ the toy method
@dataclass(frozen=True)
class ToyRun:
    """A toy run: each party's labels through randomized response at ``epsilon`` (name ``toy-eps<e>``)."""

    epsilon: float
    method = "Toy"

    @classmethod
    def parse(cls, name: str) -> ToyRun:
        m = re.fullmatch(r"toy-eps([0-9.]+)", name)
        if not m:
            raise ValueError(f"toy run {name!r}: expected toy-eps<e>")
        return cls(float(m[1]))

    @property
    def name(self) -> str:
        return f"toy-eps{self.epsilon!r}"


def toy_work(wc, sizes: work.Sizes) -> work.Work:
    """The server's student: one epoch over every party's records."""
    w = work.Work()
    ns, w.estimated = sizes.parties(wc["scenario"])
    w.add("cnn2-32-64-d0.2", work.SHAPES[sizes.scenario(wc["scenario"])["public"]], 32, sum(ns))
    return w


def toy(job: Job, run: ToyRun) -> dict:
    """The method function: one party's labels through randomized response (noise keyed by the job's
    release), scored as the share of released votes that still name the true label."""
    labels = np.load(job.input["labels"])
    mechanism = registry.parse(f"rr-eps{run.epsilon!r}")
    gen = seeding.release_rng(job.seed, job.randomness, job.rule, job.release)
    votes = mechanism.release(labels[:, None], 10, gen)  # column sums of the flipped one-hot votes
    kept = votes[np.bincount(labels, minlength=10).argmax()] / len(labels)
    return result_row(
        mechanism.guarantee(1),
        method=run.method,
        scenario=job.scenario,
        public_dataset="none",
        private_dataset="mnist",
        mechanism=mechanism.spec,
        accuracy=float(kept),
        n=len(labels),
        preset=job.preset,
        seed=job.seed,
        wall_seconds=0.0,
        device="cpu",
    )


TOY = stages.Method(
    "toy",
    ToyRun,
    (
        stages.Stage("toy_answers", "party", releases=r"/answers\.npy$"),
        stages.Stage("toy_server", "server", toy_work),
    ),
)


@pytest.fixture
def toy_method():
    stages.register(TOY)
    yield TOY
    stages.unregister("toy")


# ------------------------------------------------------------------------------------------------ the tests
def test_a_registered_method_is_planned(toy_method, tmp_path):
    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    runs = {**config, "scenarios": scenarios(config)}
    wc = {"scenario": "femnist_iid", "run": "toy-eps1.0"}
    planned = plan.job_work("toy_server", wc, runs, str(tmp_path))
    ns, _ = work.Sizes(runs, str(tmp_path)).parties("femnist_iid")
    assert planned.rule == "toy_server" and planned.total == sum(ns)
    assert plan.job_work("toy_answers", {**wc, "party": "0"}, runs, str(tmp_path)) is None

    class Fixed:
        def __call__(self, arch, shape, batch):
            return 1000.0

        def floor(self, kind):
            return 0.0

    p = plan.make_plan([("toy_server", wc)], runs, str(tmp_path), cores=2, throughput=Fixed())
    assert p.stages["toy_server"][:2] == [1, sum(ns)]


def test_a_registered_method_is_held_to_the_boundary(toy_method):
    scenarios_ = {"s": {"public": "cifar10", "private": "cifar10"}}
    party = "results/partitions/s/party-0.parquet"
    release = "results/toy/s/toy-eps1.0/party-0/answers.npy"
    dealt = [
        DagJob("ingest", ["../data/cifar10"], ["results/data/cifar10/train.parquet"], {"dataset": "cifar10"}),
        DagJob("partition", ["results/data/cifar10/train.parquet"], ["results/partitions/s/assignment.parquet"]),
        DagJob("party_data", ["results/partitions/s/assignment.parquet"], [party], {"scenario": "s", "party": "0"}),
    ]
    answers = DagJob(
        "toy_answers", [party], [release, "results/toy/s/toy-eps1.0/party-0/raw.npy"], {"scenario": "s", "party": "0"}
    )
    server = DagJob("toy_server", [release], ["results/toy/s/toy-eps1.0/result.json"], {"scenario": "s"})
    assert boundary.check([*dealt, answers, server], scenarios_) == []
    # the server reads the party's table, then an output of the party that is not a release
    leaks = {
        party: "it holds private records of scenario s",
        "results/toy/s/toy-eps1.0/party-0/raw.npy": "a private file (toy_answers's output)",
    }
    for leak, why in leaks.items():
        bad = DagJob("toy_server", [release, leak], server.outputs, server.wildcards)
        assert boundary.check([*dealt, answers, bad], scenarios_) == [f"toy_server (server) reads {leak}: {why}"]
    stages.unregister("toy")
    assert boundary.check([*dealt, answers, server], scenarios_)[0] == "rule toy_answers has no role in pipelib.stages"


def test_the_toy_method_function_writes_a_result_row_with_its_guarantee(tmp_path):
    labels = np.random.default_rng(0).integers(0, 10, 500)
    np.save(tmp_path / "labels.npy", labels)
    job = Job(seed=3, preset="tiny", rule="toy_answers", release={"scenario": "s", "party": "0", "run": "toy-eps1.0"})
    job = Job(**{**job.__dict__, "input": {"labels": str(tmp_path / "labels.npy")}})
    row = toy(job, ToyRun.parse("toy-eps1.0"))
    assert list(row)[: len(RESULT_COLUMNS)] == list(RESULT_COLUMNS)
    assert (row["epsilon"], row["delta"], row["method"]) == (1.0, 0.0, "Toy")
    assert row["adjacency"] == "any two inputs of a local randomizer" and row["accountant"]
    assert row == toy(job, ToyRun.parse("toy-eps1.0"))  # same seed and release: same noise
    other = Job(**{**job.__dict__, "release": {**job.release, "party": "1"}})
    assert toy(other, ToyRun.parse("toy-eps1.0"))["accuracy"] != row["accuracy"]  # another release: other noise


def test_a_rule_belongs_to_one_method():
    with pytest.raises(ValueError, match="fedmd belong to another method"):
        stages.register(stages.Method("copy", None, (stages.Stage("fedmd", "federation"),)))
    assert "copy" not in stages.METHODS
    with pytest.raises(ValueError, match="role 'owner' is not one of"):
        stages.Stage("x", "owner")


def test_the_planned_work_of_the_workflows_stages_is_unchanged(tmp_path):
    """The per-stage functions give the formulas the planner used before they moved (pinned on the tiny
    preset before any file exists)."""
    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    runs = {**config, "scenarios": scenarios(config)}
    sizes = work.Sizes(runs, str(tmp_path))
    f = runs["fedmd"]
    ns, estimated = sizes.parties("femnist_iid")
    got = plan.job_work(
        "fedmd",
        {"scenario": "femnist_iid", "answer": "softmax", "run": "nfdp-with_replacement-k16"},
        runs,
        str(tmp_path),
    )
    per_party = (
        f["init_epochs"] * 16
        + f["rounds"] * f["digest_epochs"] * f["public_per_round"]
        + f["rounds"] * f["revisit_epochs"] * 16
        + work.FORWARD * (f["rounds"] * f["public_per_round"] + (f["rounds"] + 1) * sizes.test("femnist_iid"))
    )
    assert got.estimated == estimated and got.total == pytest.approx(len(ns) * per_party)
    for rule in ("partition", "nfdp_sample", "distill_answers", "cluster"):
        assert plan.job_work(rule, {"scenario": "femnist_iid"}, runs, str(tmp_path)) is None


def test_the_teachers_are_planned_pates_own_cnns_over_the_pool_heads_by_their_encoders_pass(tmp_path):
    """PATE's own teachers (design S<n>) train every CNN over its shard, and the shards cover the pool: their
    job plans epochs x pool training passes (until issue 50's stage timing the plan left this job out); heads
    plan their encoder's forward pass over the pool, and HOG heads nothing; the votes of S<n> teachers cost
    each CNN's forward pass on each query."""
    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    runs = {**config, "scenarios": scenarios(config)}
    pool = sum(work.Sizes(runs, str(tmp_path)).parties("ldpdl_mnist")[0])
    s, enc = runs["ldpdl"]["pate"]["scratch"], runs["ldpdl"]["teacher"]["by_dataset"]["mnist"]

    def planned(rule, **wc):
        return plan.job_work(rule, {"scenario": "ldpdl_mnist", **wc}, runs, str(tmp_path))

    cnn = planned("ldpdl_teachers", design="S8")
    assert cnn.passes == {  # the CNNs' epochs timed as their vmap groups step (at most 8: the teachers)
        (s["arch"], (1, 28, 28), s["batch"], min(s["group"], 8)): s["epochs"] * pool,
        (s["arch"], (1, 28, 28), 1024): pytest.approx(work.FORWARD * pool),
    }
    for design in ("T8", "L30", "parties"):
        assert planned("ldpdl_teachers", design=design).passes == {
            (enc["arch"], (1, 28, 28), 1024): pytest.approx(work.FORWARD * pool)
        }
    votes = planned("distill_votes", teacher="pate-S8-q40")
    assert votes.total == pytest.approx(work.FORWARD * 8 * 40)
    hog = {**runs, "ldpdl": {**runs["ldpdl"], "teacher": {**runs["ldpdl"]["teacher"], "by_dataset": {}}}}
    assert plan.job_work("ldpdl_teachers", {"scenario": "ldpdl_mnist", "design": "T8"}, hog, str(tmp_path)) is None


@pytest.mark.parametrize(
    "rule, wildcards, name",
    [
        (
            "fedmd",
            {"scenario": "s", "answer": "softmax", "run": "nfdp-with_replacement-k16"},
            "nfdp-with_replacement-k16",
        ),
        ("ldpfl", {"scenario": "s", "flmech": "twopoint-eps1.0-c0.0-r0.075", "frac": "0.1", "rounds": "10"}, None),
        ("distill_student", {"scenario": "s", "teacher": "rknn-hog-s40-k1", "mech": "laplace-eps0.1"}, None),
        (
            "ldpdl_student",
            {"ldmech": "pm", "eps": "5.0", "nq": "30", "design": "L2000", "qs": "aqs", "iteration": "5"},
            None,
        ),
        (
            "distill_student",
            {"scenario": "s", "teacher": "pate-T250-q1000", "mech": "gnmax-eps8.0"},
            "pate-eps8.0-T250-q1000",
        ),
        ("dpsgd", {"scenario": "s", "arch": "cnn2-32-64-d0.2", "eps": "8.0"}, "cnn2-32-64-d0.2/eps8.0"),
        ("audit_ldpdl", {"scenario": "s", "run": "pate-eps8.0-parties-q40"}, "ldpdl/s/pate-eps8.0-parties-q40"),
    ],
)
def test_a_jobs_run_record_is_parsed_from_its_wildcards_and_names_its_folder(rule, wildcards, name):
    run = stages.run_of(rule, wildcards)
    record = stages.METHODS[next(m for m, meth in stages.METHODS.items() if any(s.rule == rule for s in meth.stages))]
    # the distillation stage's record reads reverse k-NN's teacher or PATE's run from the teacher wildcard
    assert run is not None and (type(run) is record.run or record.run is DistillRun)
    assert record.run is not DistillRun or type(run) is (PateRun if name else RknnRun)
    folder = {"ldpfl": "flmech", "distill_student": "teacher"}.get(rule)
    expected = name or (wildcards[folder] if folder else "pm-eps5.0-q30-L2000-aqs")
    assert run.name == expected
    assert stages.run_of("ldpdl_teachers", {"scenario": "s", "design": "L2000"}) is None  # a shared job
    assert stages.run_of("partition", {"scenario": "s"}) is None
