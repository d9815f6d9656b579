"""pipelib.runs: the typed run records, and the grammar of their names in one place."""

import re

import pytest

from pipelib.runs import FEDMD_RUN, FedmdRun


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
