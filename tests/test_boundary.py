"""The privacy boundary checker: it passes a DAG that keeps the boundary and fails each kind of
crossing (the workflow tests apply it to the whole tiny DAG, by content, and to the other presets)."""

import re
from pathlib import Path

import pytest

from pipelib import boundary, stages
from pipelib.boundary import DagJob

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = {
    "s": {"public": "cifar10", "private": "cifar10"},
    "f": {"public": "mnist", "private": "femnist"},
    "s-canaries-replace": {"public": "cifar10", "private": "cifar10"},
}
CANARIES = "results/partitions/s-canaries-replace/canaries.parquet"


def dag():
    """A small DAG shaped like the workflow's: dealer, party, curator, public, server, report jobs."""
    d = "results/distill/s/rknn-hog-s4-k1"
    jobs = [
        *[
            DagJob("ingest", [f"../data/{ds}"], [f"results/data/{ds}/train.parquet"], {"dataset": ds})
            for ds in ("cifar10", "mnist", "femnist")
        ],
        DagJob(
            "partition",
            ["results/data/cifar10/train.parquet"],
            [
                "results/partitions/s/public.parquet",
                "results/partitions/s/test.parquet",
                "results/partitions/s/assignment.parquet",
            ],
            {"scenario": "s"},
        ),
        DagJob("pretrain", ["results/data/mnist/train.parquet"], ["results/pretrain/mnist/a.pt"], {"public": "mnist"}),
        DagJob(
            "fedmd",
            ["results/pretrain/mnist/a.pt"],
            ["results/fedmd/f/softmax/np/result.json", "results/fedmd/f/softmax/np/models.pt"],
            {"scenario": "f"},
        ),
        # a UMAP encoder fitted on a SimCLR encoder's features: public images and a public model only
        DagJob(
            "train_encoder",
            ["results/partitions/s/public.parquet"],
            ["results/represent/s/simclr/encoder.pt"],
            {"scenario": "s", "encoder": "simclr"},
        ),
        DagJob(
            "train_encoder",
            ["results/partitions/s/public.parquet", "results/represent/s/simclr/encoder.pt"],
            ["results/represent/s/umap/encoder.pt"],
            {"scenario": "s", "encoder": "umap"},
        ),
    ]
    for p in (0, 1):
        jobs += [
            DagJob(
                "party_data",
                ["results/partitions/s/assignment.parquet", "results/data/cifar10/train.parquet"],
                [f"results/partitions/s/party-{p}.parquet"],
                {"scenario": "s", "party": str(p)},
            ),
            DagJob(
                "embed_party",
                [f"results/partitions/s/party-{p}.parquet"],
                [f"results/represent/s/hog/party-{p}.npy"],
                {"scenario": "s", "encoder": "hog", "party": str(p)},
            ),
            DagJob(
                "distill_answers",
                [f"results/partitions/s/party-{p}.parquet", f"results/represent/s/hog/party-{p}.npy"],
                [f"{d}/answers/party-{p}.npy"],
                {"scenario": "s", "party": str(p)},
            ),
        ]
    dp = "results/dpsgd/s/a/eps1.0"
    jobs += [  # DP-SGD: every party's records pooled (a baseline); its model and guarantee are a release
        DagJob(
            "dpsgd",
            [f"results/partitions/s/party-{p}.parquet" for p in (0, 1)] + ["results/partitions/s/test.parquet"],
            [f"{dp}/result.json", f"{dp}/model.pt", f"{dp}/releases.json"],
            {"scenario": "s"},
        ),
        DagJob("privacy_ledger", [f"{dp}/releases.json"], ["results/privacy_ledger.csv"], {}),
    ]
    r = "results/ldpdl/s/pm-eps5.0-q2-L4-aqs"
    soft = ["results/ldpdl/s/teachers-L4/teachers.npz", "results/ldpdl/s/teachers-L4/teachers.json"]
    pate_teachers = ["results/ldpdl/s/teachers-T2/teachers.npz", "results/ldpdl/s/teachers-T2/teachers.json"]
    pt = "results/distill/s/pate-T2-q4"
    enc = "results/ldpdl/encoder-cifar10/encoder.pt"  # the teachers' encoder, trained on another dataset
    jobs += [
        DagJob("ldpdl_encoder", ["results/data/mnist/train.parquet"], [enc], {"tdata": "cifar10"}),
        DagJob(
            "ldpdl_teachers",
            [f"results/partitions/s/party-{p}.parquet" for p in (0, 1)] + [enc],
            soft,
            {"scenario": "s", "design": "L4"},
        ),
        DagJob(
            "ldpdl_teachers",
            [f"results/partitions/s/party-{p}.parquet" for p in (0, 1)],
            pate_teachers,
            {"scenario": "s", "design": "T2"},
        ),
        DagJob(
            "ldpdl_plan",
            ["results/partitions/s/public.parquet"],
            [f"{r}/plan.json", f"{r}/iter-1/queries.npy"],
            {"scenario": "s"},
        ),
        DagJob(
            "ldpdl_release",
            [f"{r}/plan.json", f"{r}/iter-1/queries.npy", *soft, "results/partitions/s/public.parquet", enc],
            [f"{r}/iter-1/answers.npy", f"{r}/iter-1/answers.guarantee.json", f"{r}/iter-1/answers.records.npy"],
            {"scenario": "s", "iteration": "1"},
        ),
        DagJob(
            "ldpdl_student",
            [
                f"{r}/plan.json",
                f"{r}/iter-1/queries.npy",
                f"{r}/iter-1/answers.npy",
                f"{r}/iter-1/answers.guarantee.json",
                f"{r}/iter-1/answers.records.npy",
                "results/partitions/s/public.parquet",
                "results/partitions/s/test.parquet",
            ],
            [f"{r}/iter-1/result.json", f"{r}/iter-1/next.npy"],
            {"scenario": "s", "iteration": "1"},
        ),
        # PATE in the distillation stage: the teachers' votes (private) -> the curator -> the server
        DagJob(
            "distill_votes",
            [*pate_teachers, "results/partitions/s/public.parquet"],
            [f"{pt}/answers/teachers.npy"],
            {"scenario": "s", "teacher": "pate-T2-q4"},
        ),
        DagJob(
            "distill_curate",
            [f"{pt}/answers/teachers.npy", pate_teachers[1]],
            [f"{pt}/gnmax-eps5.0/release/curated.npy", f"{pt}/gnmax-eps5.0/release/curated.guarantee.json"],
            {"scenario": "s", "teacher": "pate-T2-q4"},
        ),
        DagJob(
            "distill_aggregate",
            [f"{pt}/gnmax-eps5.0/release/curated.npy", f"{pt}/gnmax-eps5.0/release/curated.guarantee.json"],
            [f"{pt}/gnmax-eps5.0/counts.npy", f"{pt}/gnmax-eps5.0/aggregate.json"],
            {"scenario": "s", "teacher": "pate-T2-q4"},
        ),
        DagJob(
            "distill_label",
            [f"{pt}/gnmax-eps5.0/counts.npy", "results/partitions/s/public.parquet"],
            [f"{pt}/gnmax-eps5.0/labels.parquet"],
            {"scenario": "s", "teacher": "pate-T2-q4"},
        ),
        DagJob(
            "distill_student",
            [
                f"{pt}/gnmax-eps5.0/labels.parquet",
                f"{pt}/gnmax-eps5.0/aggregate.json",
                f"{pt}/gnmax-eps5.0/release/curated.guarantee.json",
                "results/partitions/s/public.parquet",
            ],
            [f"{pt}/gnmax-eps5.0/result.json"],
            {"scenario": "s", "teacher": "pate-T2-q4"},
        ),
        DagJob(
            "ldpdl_ceiling",
            ["results/partitions/s/public.parquet", "results/partitions/s/test.parquet"],
            ["results/ldpdl/s/ceiling/result.json"],
            {"scenario": "s"},
        ),
        DagJob(
            "table_ldpdl",
            [f"{r}/iter-1/result.json", f"{pt}/gnmax-eps5.0/result.json", "results/ldpdl/s/ceiling/result.json"],
            ["results/table_ldpdl.csv"],
            {},
        ),
    ]
    jobs += [
        DagJob(
            "distill_curate",
            [f"{d}/answers/party-0.npy", f"{d}/answers/party-1.npy"],
            [f"{d}/none/release/curated.npy"],
            {"scenario": "s"},
        ),
        DagJob("distill_aggregate", [f"{d}/none/release/curated.npy"], [f"{d}/none/counts.npy"], {"scenario": "s"}),
        DagJob(
            "distill_student",
            [f"{d}/none/counts.npy", "results/partitions/s/public.parquet", "results/partitions/s/test.parquet"],
            [f"{d}/none/result.json"],
            {"scenario": "s"},
        ),
        DagJob(
            "compare", [f"{d}/none/result.json", "results/dpsgd/s/a/eps1.0/result.json"], ["results/compare.csv"], {}
        ),
    ]
    fl = "results/ldpfl/s/twopoint-eps5.0-adaptive/f1.0-m2"
    jobs += [  # LDP-FL: every client, the shuffler and the server in one federation job
        DagJob(
            "ldpfl",
            [
                "results/partitions/s/assignment.parquet",
                "results/data/cifar10/train.parquet",
                "results/partitions/s/test.parquet",
            ],
            [f"{fl}/result.json", f"{fl}/rounds.parquet", f"{fl}/releases.json", f"{fl}/model.pt"],
            {"scenario": "s"},
        ),
        DagJob("table_ldpfl", [f"{fl}/result.json"], ["results/table_ldpfl.csv"], {}),
        DagJob("figure_p001", [f"{fl}/result.json", f"{fl}/rounds.parquet"], ["results/figures/p001_epsilon.png"], {}),
    ]
    a = "results/distill/s-canaries-replace/rknn-hog-s4-k1/laplace-eps1.0"
    jobs += [  # the audit: the dealer deals the canaries; only the auditor reads them (and private files)
        DagJob(
            "audit_partition",
            ["results/data/cifar10/train.parquet"],
            [f"results/partitions/s-canaries-replace/{n}.parquet" for n in ("assignment", "public", "test")]
            + [CANARIES],
            {"scenario": "s-canaries-replace"},
        ),
        DagJob("distill_curate", [], [f"{a}/release/curated.npy"], {"scenario": "s-canaries-replace"}),
        DagJob(
            "audit_distill",
            [CANARIES, f"{a}/release/curated.npy", f"{d}/answers/party-0.npy", "results/represent/s/hog/party-1.npy"],
            ["results/audit/distill/s-canaries-replace/rknn-hog-s4-k1/laplace-eps1.0/audit.json"],
            {"scenario": "s-canaries-replace"},
        ),
        DagJob(
            "audit_fedmd",
            [CANARIES, "results/fedmd/f/softmax/np/models.pt"],
            ["results/audit/fedmd/f/softmax/np/audit.json"],
            {"scenario": "s-canaries-replace"},
        ),
        DagJob(
            "audit_table",
            ["results/audit/distill/s-canaries-replace/rknn-hog-s4-k1/laplace-eps1.0/audit.json"],
            ["results/audit.csv"],
            {},
        ),
    ]
    return jobs


def crossed(rule, extra, match=None):
    jobs = dag()
    for j in jobs:
        if j.rule == rule and (match is None or match in j.outputs[0]):
            j.inputs.append(extra)
    return boundary.check(jobs, SCENARIOS)


def test_a_dag_that_keeps_the_boundary_passes():
    assert boundary.check(dag(), SCENARIOS) == []


@pytest.mark.parametrize(
    "rule,extra,match,why",
    [
        ("distill_student", "results/data/cifar10/train.parquet", None, "holds private records of scenario s"),
        ("distill_student", "results/partitions/s/assignment.parquet", None, "private records"),
        ("distill_aggregate", "results/distill/s/rknn-hog-s4-k1/answers/party-0.npy", None, "a private file"),
        ("distill_student", "results/represent/s/hog/party-1.npy", None, "a private file"),
        ("embed_party", "results/partitions/s/party-1.parquet", "party-0", "another party's file"),
        ("train_encoder", "results/represent/s/hog/party-1.npy", None, "a private file"),
        ("train_encoder", "results/partitions/s/assignment.parquet", None, "private records"),
        ("compare", "results/fedmd/f/softmax/np/resume.pt", None, "never inputs"),
        ("distill_student", "results/logs/fedmd/f/softmax/np.log", None, "never inputs"),
        # LDP-DL: the teachers' job reads the parties' tables and nothing else; the server reads only
        # sanitized answers; the owners' job reads the teachers and nothing else private
        ("ldpdl_teachers", "results/represent/s/hog/party-1.npy", None, "a private file"),
        # the teachers' encoder serves the scenarios whose teachers read it: never trained on their pool
        ("ldpdl_encoder", "results/data/cifar10/train.parquet", None, "holds private records of scenario s"),
        ("ldpdl_encoder", "results/partitions/s/party-0.parquet", None, "private records"),
        ("ldpdl_teachers", "results/ldpdl/s/pm-eps5.0-q2-L4-aqs/iter-1/answers.npy", None, "a release file"),
        ("ldpdl_student", "results/ldpdl/s/teachers-L4/teachers.npz", None, "a private file"),
        ("distill_student", "results/ldpdl/s/teachers-T2/teachers.npz", None, "a private file"),
        # PATE: the teachers' raw votes go to the curator only, never to the server
        ("distill_aggregate", "results/distill/s/pate-T2-q4/answers/teachers.npy", None, "a private file"),
        ("distill_label", "results/distill/s/pate-T2-q4/answers/teachers.npy", None, "a private file"),
        ("distill_votes", "results/partitions/s/party-0.parquet", None, "private records"),
        ("ldpdl_release", "results/represent/s/hog/party-0.npy", None, "not of ldpdl_teachers"),
        ("ldpdl_release", "results/partitions/s/party-0.parquet", None, "private records"),
        ("distill_curate", "results/partitions/s/party-0.parquet", None, "private records"),
        ("ldpdl_plan", "results/ldpdl/s/teachers-L4/teachers.npz", None, "a private file"),
        # the noise-free reference reads public data only: no teacher, no release
        ("ldpdl_ceiling", "results/ldpdl/s/teachers-L4/teachers.npz", None, "a private file"),
        ("ldpdl_ceiling", "results/partitions/s/party-0.parquet", None, "private records"),
        # LDP-FL: the reports read the runs' results, never the clients' records or a run's checkpoint
        ("table_ldpfl", "results/partitions/s/assignment.parquet", None, "private records"),
        ("figure_p001", "results/data/cifar10/train.parquet", None, "holds private records of scenario s"),
        ("table_ldpfl", "results/ldpfl/s/none/f1.0-m2/resume.pt", None, "never inputs"),
        # the audit's secret: no rule outside the audit reads a canary list, nor the audit private files
        ("distill_student", CANARIES, None, "a canary file"),
        ("ldpfl", CANARIES, None, "a canary file"),
        ("audit_table", CANARIES, None, "a canary file"),
        ("embed_party", CANARIES, "party-0", "a canary file"),
        ("audit_table", "results/distill/s/rknn-hog-s4-k1/answers/party-0.npy", None, "a private file"),
        ("compare", "results/fedmd/f/softmax/np/models.pt", None, "a private file"),
        # DP-SGD pools the parties' records, never what their jobs derived privately, nor canaries
        ("dpsgd", "results/distill/s/rknn-hog-s4-k1/answers/party-0.npy", None, "a private file"),
        ("dpsgd", CANARIES, None, "a canary file"),
    ],
)
def test_each_kind_of_crossing_fails(rule, extra, match, why):
    problems = crossed(rule, extra, match)
    assert problems and all(why in p for p in problems), problems


def test_a_pretraining_is_checked_against_the_scenarios_it_serves():
    """pretrain has no scenario wildcard: it serves the scenarios whose rows start from its model."""
    jobs = dag()
    pretrain = next(j for j in jobs if j.rule == "pretrain")
    pretrain.inputs = ["results/data/femnist/train.parquet"]  # the private data of scenario f
    assert boundary.check(jobs, SCENARIOS) == [
        "pretrain (public) reads results/data/femnist/train.parquet: it holds private records of scenario f"
    ]


def test_a_pretraining_on_a_scenarios_pool_reads_the_pool_not_the_dataset():
    """Where public and private data are one dataset (scenario s), the shared initialization of FedMD's
    parties learns from the scenario's public pool (rule pretrain_pool); the dataset's train split
    holds the parties' records."""
    pool = DagJob(
        "pretrain_pool",
        ["results/partitions/s/public.parquet", "results/partitions/s/test.parquet"],
        ["results/pretrain_pool/s/a-c20.pt"],
        {"scenario": "s", "arch": "a", "n_classes": "20"},
    )
    assert boundary.check([*dag(), pool], SCENARIOS) == []
    pool.inputs = ["results/data/cifar10/train.parquet", "results/partitions/s/test.parquet"]
    assert boundary.check([*dag(), pool], SCENARIOS) == [
        "pretrain_pool (public) reads results/data/cifar10/train.parquet: it holds private records of scenario s"
    ]


def test_a_rule_without_a_role_fails():
    jobs = [*dag(), DagJob("mystery", [], ["results/x"], {})]
    assert boundary.check(jobs, SCENARIOS) == ["rule mystery has no role in pipelib.stages"]


def test_every_rule_of_the_workflow_has_a_role():
    rules = set()
    for smk in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]:
        text = smk.read_text()
        rules |= set(re.findall(r"^\s*rule (\w+):", text, flags=re.M))
        rules |= set(re.findall(r"^\s*use rule \w+ as (\w+)", text, flags=re.M))  # a rule defined by another
    from pipelib.report.registry import VIEWS

    rules |= set(VIEWS)  # the tables' and figures' rules: report.smk defines one per registry entry
    assert boundary.rule_roles(sorted(rules)) == []
    assert {stages.roles()[v] for v in VIEWS} == {"report"}  # a table or figure reads only result rows
    assert set(stages.roles()) == rules  # no stale entries either


def test_parse_dry_run():
    text = (
        "rule a:\n    input: x, y\n    output: z\n    wildcards: scenario=s, party=0\n    jobid: 1\n"
        "localrule all:\n    input: z\n    jobid: 0\n"
    )
    a, b = boundary.parse_dry_run(text)
    assert (a.rule, a.inputs, a.outputs, a.wildcards) == ("a", ["x", "y"], ["z"], {"scenario": "s", "party": "0"})
    assert (b.rule, b.inputs, b.outputs, b.wildcards) == ("all", ["z"], [], {})
