"""pipelib.runs: the typed run records, and the grammar of their names in one place."""

import re

import pytest
from snakemake.iocontainers import Wildcards

from pipelib.runs import (
    FEDMD_RUN,
    LDPDL_RUN,
    LDPFL_RUN,
    PATE_RUN,
    TEACHER_RUN,
    AuditRun,
    DpsgdRun,
    FedmdRun,
    LdpdlRun,
    LdpflRun,
    PateRun,
    PateTeachers,
    RknnRun,
    student_run,
    teacher_run,
)


@pytest.mark.parametrize(
    "name,run",
    [
        ("np", FedmdRun("np")),
        ("nfdp-with_replacement-k16", FedmdRun("nfdp", "with_replacement", 16)),
        ("ldp-without_replacement-k364", FedmdRun("ldp", "without_replacement", 364)),
    ],
)
def test_a_fedmd_run_name_parses_and_formats_back(name, run):
    assert FedmdRun.parse(name) == run and run.name == name == str(run)
    assert FEDMD_RUN.fullmatch(name) and re.fullmatch(FEDMD_RUN.pattern, name)


def test_what_a_fedmd_run_says_about_itself():
    nfdp, ldp, np_ = FedmdRun.nfdp("with_replacement", 16), FedmdRun.ldp("with_replacement", 16), FedmdRun("np")
    assert (np_.method, nfdp.method, ldp.method) == ("FedMD-NP", "FedMD-NFDP", "FedMD-LDP")
    assert nfdp.sample == ldp.sample == ("with_replacement", 16) and np_.sample is None
    assert ldp.draws_noise and not nfdp.draws_noise and not np_.draws_noise


BAD = ["nfdp", "nfdp-with_replacement-16", "ldp-poisson-k3", "nfdp-with_replacement-k0", "x"]


@pytest.mark.parametrize("name", BAD)
def test_a_bad_fedmd_run_name_is_refused_with_the_grammar(name):
    with pytest.raises(ValueError, match="expected np, nfdp-<sampling>-k<k> or ldp-<sampling>-k<k>"):
        FedmdRun.parse(name)
    with pytest.raises(ValueError, match="np takes no sample"):
        FedmdRun("nfdp")


@pytest.mark.parametrize(
    "name,run",
    [
        ("none", LdpflRun()),
        ("twopoint-eps5.0-adaptive", LdpflRun(5.0, "adaptive")),
        ("twopoint-eps10.0-c0.0-r0.075", LdpflRun(10, (0, 0.075))),
        ("twopoint-eps0.1-c-0.5-r2.0", LdpflRun(0.1, (-0.5, 2.0))),
        ("clip-c0.0-r0.015", LdpflRun(None, (0, 0.015))),
    ],
)
def test_an_ldpfl_run_name_parses_and_formats_back(name, run):
    assert LdpflRun.parse(name) == run and run.name == name == str(run)
    assert re.fullmatch(LDPFL_RUN.pattern, name)
    noise_free = name == "none" or name.startswith("clip")
    assert run.spec == (None if noise_free else name.split("-", 2)[0] + "-" + name.split("-", 2)[1])
    assert run.clipped == name.startswith("clip")


@pytest.mark.parametrize(
    "name", ["twopoint-eps5.0", "twopoint-5.0-adaptive", "laplace-eps1.0-adaptive", "noise", "clip-adaptive"]
)
def test_a_bad_ldpfl_run_name_is_refused_with_the_grammar(name):
    assert not re.fullmatch(LDPFL_RUN.pattern, name)  # the wildcard's constraint refuses it too
    with pytest.raises(ValueError, match="expected none, twopoint-eps<e>-adaptive.*clip-c<c>-r<r>"):
        LdpflRun.parse(name)
    with pytest.raises(ValueError, match="noise-free takes no range or a fixed box"):
        LdpflRun(None, "adaptive")
    with pytest.raises(ValueError, match="a private run takes an epsilon and a range"):
        LdpflRun(1.0, None)


def test_ldpdl_and_pate_run_folders_parse_and_format_back():
    ldpdl, pate = LdpdlRun("pm", 5, 30, "L10000", "aqs"), PateRun(8, "T250", 1000)
    assert ldpdl.name == "pm-eps5.0-q30-L10000-aqs" and pate.name == "pate-eps8.0-T250-q1000"
    assert student_run(ldpdl.name) == ldpdl and student_run(pate.name) == pate
    assert student_run("laplacebox-eps0.5-q10-parties-random") == LdpdlRun("laplacebox", 0.5, 10, "parties", "random")
    assert (ldpdl.method, pate.method) == ("LDP-DL", "PATE")
    wildcards = {"ldmech": "duchi", "eps": "1.0", "nq": "10", "design": "parties", "qs": "aqs"}
    assert LdpdlRun.of(wildcards).name == "duchi-eps1.0-q10-parties-aqs"
    assert re.fullmatch(LDPDL_RUN.pattern, ldpdl.name) and re.fullmatch(PATE_RUN.pattern, pate.name)


def test_a_pate_run_is_a_distillation_teacher_and_mechanism():
    pate = PateRun(8, "parties", 40)
    assert (str(pate.teachers), pate.mechanism) == ("pate-parties-q40", "gnmax-eps8.0")
    assert PateRun.of({"scenario": "s", "teacher": "pate-parties-q40", "mech": "gnmax-eps8.0"}) == pate
    assert PateRun.of({"teacher": "pate-parties-q40", "cmech": "gnmax-eps8.0"}) == pate
    assert PateTeachers.parse("pate-T250-q1000") == PateTeachers("T250", 1000)
    assert teacher_run("pate-T8-q40") == PateTeachers("T8", 40) and teacher_run("rknn-hog-s20-k1") == RknnRun(
        "hog", 20, 1
    )
    assert re.fullmatch(TEACHER_RUN.pattern, "pate-T8-q40") and re.fullmatch(TEACHER_RUN.pattern, "rknn-hog-s20-k1")
    assert not re.fullmatch(TEACHER_RUN.pattern, "pate-L8-q40")  # PATE's teachers are disjoint: T<n> or parties
    with pytest.raises(ValueError, match="pate-<T<n>|parties>-q<queries>"):
        PateTeachers.parse("pate-T8")
    with pytest.raises(ValueError, match="not gnmax"):
        PateRun.of({"teacher": "pate-T8-q40", "mech": "laplace-eps1.0"})


@pytest.mark.parametrize(
    "name", ["pm-eps5.0-q30-L10000", "gauss-eps1.0-q3-parties-aqs", "pate-eps1.0", "pate-eps1.0-T8", "pm"]
)
def test_a_bad_ldpdl_or_pate_run_folder_is_refused_with_both_grammars(name):
    with pytest.raises(ValueError, match="expected <mechanism>-eps<e>-q<N_Q>.* or pate-eps<e>-<teachers>-q<queries>"):
        student_run(name)


@pytest.mark.parametrize(
    "wildcards, name, audited",
    [
        (
            {"scenario": "s", "teacher": "rknn-hog-s20-k1", "mech": "laplace-eps0.1"},
            "distill/s/rknn-hog-s20-k1/laplace-eps0.1",
            RknnRun("hog", 20, 1),
        ),
        (
            {"scenario": "s", "answer": "softmax", "run": "nfdp-with_replacement-k16"},
            "fedmd/s/softmax/nfdp-with_replacement-k16",
            FedmdRun.nfdp("with_replacement", 16),
        ),
        ({"scenario": "s", "arch": "cnn2", "eps": "8.0"}, "dpsgd/s/cnn2/eps8.0", DpsgdRun("cnn2", 8.0)),
        (
            {"scenario": "s", "flmech": "twopoint-eps1.0-adaptive", "frac": "0.1", "rounds": "15"},
            "ldpfl/s/twopoint-eps1.0-adaptive/f0.1-m15",
            LdpflRun(1.0, "adaptive"),
        ),
        (
            {"scenario": "s", "run": "pate-eps8.0-parties-q40"},
            "ldpdl/s/pate-eps8.0-parties-q40",
            PateRun(8.0, "parties", 40),
        ),
        ({"name": "rr-eps1.0"}, "validation/rr-eps1.0", None),
    ],
)
def test_an_audit_names_its_output_and_the_run_it_audits(wildcards, name, audited):
    audit = AuditRun.of(wildcards)
    assert AuditRun.of(Wildcards(fromdict=wildcards)) == audit  # as Snakemake hands them
    assert audit.name == name and audit.path == f"audit/{name}/audit.json" and audit.audited == audited
    assert AuditRun(audit.kind, audit.scenario, audit.folder) == audit


def test_an_audit_without_a_run_is_refused():
    with pytest.raises(KeyError):
        AuditRun.of({"scenario": "s"})  # audit_partition deals the variant: no audited run
    with pytest.raises(ValueError, match="one of distill"):
        AuditRun("pate", "s", "x")
    with pytest.raises(ValueError, match="no scenario"):
        AuditRun("validation", "s", "none")


def test_ldpdl_folder_wildcards_spell_the_runs_name():
    """ldpdl.smk names an LDP-DL run's folder by LDPDL_WILDCARDS; filled in, it is LdpdlRun's name."""
    from pipelib.runs import LDPDL_RUN, LDPDL_WILDCARDS, LdpdlRun

    wildcards = {"ldmech": "pm", "eps": "8.0", "nq": "30", "design": "L10000", "qs": "aqs"}
    name = LDPDL_WILDCARDS.format(**wildcards)
    assert name == LdpdlRun.of(wildcards).name == "pm-eps8.0-q30-L10000-aqs" and LDPDL_RUN.fullmatch(name)


def test_budget_point_wildcards_spell_its_name():
    from pipelib.runs import BUDGET_WILDCARDS, BudgetPoint

    wildcards = {"rounds": "12", "q": "1000", "pe": "20"}
    assert BUDGET_WILDCARDS.format(**wildcards) == BudgetPoint.of(wildcards).name == "R12-q1000-pe20"


def test_every_page_is_registered_once_and_its_commands_exist():
    """pipelib.report.registry: each page names tables it reads, a function of pipelib.report.pages, and
    commands for targets that exist (a table's CSV or an own-command page); the design's page lists are the
    registry's."""
    from pipelib.report import pages, registry

    assert registry.default_pages() + registry.own_command_pages() == tuple(registry.PAGES)
    assert registry.own_command_pages() == ("fedmd_budget", "fedmd_ablation")
    assert {registry.page_module(name) for name in registry.PAGES} == {"pipelib.report.registry"}
    targets = registry.command_targets(lambda p: f"results/{p}", "reduced")
    assert targets["fedmd_ablation"] == "docs/reproduction/reduced/fedmd_ablation.md"
    assert targets["table3"] == "results/table3.csv" and set(targets) >= {"table2", "compare", "claims"}
    for name, page in registry.PAGES.items():
        assert set(page.optional) <= set(page.tables) and page.figures.split(":")[0] in (
            "",
            "prefix",
            "compare",
            "budget",
        )
        assert set(page.commands) <= set(targets), name
    assert callable(pages.write_pages)
