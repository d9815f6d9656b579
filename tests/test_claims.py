"""The papers' claims as data (src/pipelib/claims.yaml) and their verdicts on result tables."""

import pandas as pd
import pytest

from pipelib.report.claims import Claim, claims_table, load_claims, summary, verdict


def frame(rows):
    return pd.DataFrame(rows, columns=["dataset", "x", "method", "accuracy", "accuracy_low", "accuracy_high", "regime"])


T = frame(
    [
        ["A", 1, "pm", 0.50, 0.48, 0.52, ""],
        ["A", 8, "pm", 0.90, 0.89, 0.91, ""],
        ["A", 1, "duchi", 0.30, 0.28, 0.32, ""],
        ["A", 8, "duchi", 0.895, 0.885, 0.905, ""],
        ["B", 1, "pm", 0.20, 0.18, 0.22, ""],
        ["B", 8, "pm", 0.10, 0.08, 0.12, ""],
    ]
)


def claim(**kw):
    return Claim(**{"id": "c", "paper": "004", "where": "Fig. 4", "claim": "text", "source": "t", **kw})


def test_greater_holds_where_the_intervals_separate_and_is_inconclusive_where_they_overlap():
    at1 = claim(kind="greater", a={"method": "pm", "x": 1}, b={"method": "duchi", "x": 1}, per=("dataset",))
    v = verdict(at1, T[T.dataset == "A"])
    assert v["verdict"] == "holds" and v["numbers"] == "A: 0.500 [0.480, 0.520] vs 0.300 [0.280, 0.320]"
    at8 = claim(kind="greater", a={"method": "pm", "x": 8}, b={"method": "duchi", "x": 8})
    assert verdict(at8, T[T.dataset == "A"])["verdict"] == "inconclusive"
    reverse = claim(kind="greater", a={"method": "duchi", "x": 1}, b={"method": "pm", "x": 1})
    assert verdict(reverse, T[T.dataset == "A"])["verdict"] == "does not hold"


def test_a_series_against_x_and_every_group_of_per():
    grows = claim(kind="increasing", a={"method": "pm"}, x="x", per=("dataset",))
    v = verdict(grows, T)
    assert v["verdict"] == "does not hold"  # B falls: one group against it is enough
    assert "A: x 1: 0.500 [0.480, 0.520] -> x 8: 0.900 [0.890, 0.910]" in v["numbers"]
    assert verdict(grows, T[T.dataset == "A"])["verdict"] == "holds"
    assert verdict(claim(kind="decreasing", a={"method": "pm"}, x="x"), T[T.dataset == "B"])["verdict"] == "holds"


def test_within_and_thresholds_read_the_intervals():
    near = claim(kind="within", a={"method": "pm", "x": 8}, b={"method": "duchi", "x": 8}, tolerance=0.03)
    assert verdict(near, T[T.dataset == "A"])["verdict"] == "holds"  # the gap is at most 0.025
    far = claim(kind="within", a={"method": "pm", "x": 1}, b={"method": "duchi", "x": 1}, tolerance=0.02)
    assert verdict(far, T[T.dataset == "A"])["verdict"] == "does not hold"  # at least 0.16
    unsure = claim(kind="within", a={"method": "pm", "x": 8}, b={"method": "duchi", "x": 8}, tolerance=0.01)
    assert verdict(unsure, T[T.dataset == "A"])["verdict"] == "inconclusive"
    high = claim(kind="at_least", a={"method": "pm", "x": 8}, threshold=0.85)
    assert verdict(high, T[T.dataset == "A"])["verdict"] == "holds"
    assert verdict(claim(kind="at_least", a={"method": "pm", "x": 8}, threshold=0.905), T[T.dataset == "A"])[
        "verdict"
    ] == ("inconclusive")
    assert verdict(claim(kind="at_most", a={"method": "pm", "x": 8}, threshold=0.5), T[T.dataset == "A"])[
        "verdict"
    ] == ("does not hold")


def test_missing_rows_or_a_row_outside_the_regime_leave_a_claim_untested():
    c = claim(kind="greater", a={"method": "pm", "x": 1}, b={"method": "laplace", "x": 1})
    assert verdict(c, T)["verdict"] == "untested"
    assert verdict(c, None)["why"] == "t is not made by this run"
    nothing = verdict(claim(kind="at_least", a={"method": "none", "x": 1}, threshold=0.5), T)
    assert nothing["verdict"] == "untested" and nothing["why"] == "no rows with method none, x 1"
    assert nothing["numbers"] == ""  # the reason is said once
    flagged = T.assign(regime=["owners L 2,000 (paper 10,000)"] + [""] * 5)
    v = verdict(claim(kind="greater", a={"method": "pm", "x": 1}, b={"method": "duchi", "x": 1}), flagged[:4])
    assert v["verdict"] == "untested" and v["regime"] == "owners L 2,000 (paper 10,000)"


def test_a_claim_names_what_its_kind_needs():
    with pytest.raises(ValueError, match="kind greater needs rows b"):
        claim(kind="greater", a={"method": "pm"})
    with pytest.raises(ValueError, match="unknown kind 'bigger'"):
        claim(kind="bigger", a={})
    with pytest.raises(ValueError, match="needs a tolerance"):
        claim(kind="within", a={"x": 1}, b={"x": 8})


def test_the_shipped_claims_load_and_the_table_summarises_per_paper(tmp_path):
    claims = load_claims()
    assert len(claims) >= 20 and {c.paper for c in claims} == {"001", "002", "003", "004"}
    path = tmp_path / "t.csv"
    T.to_csv(path, index=False)
    mine = [
        claim(id="a", kind="greater", a={"method": "pm", "x": 1, "dataset": "A"}, b={"method": "duchi", "x": 1}),
        claim(id="b", kind="increasing", a={"method": "pm", "dataset": "A"}, x="x", paper="001"),
        claim(id="c", kind="at_least", a={"method": "laplace"}, threshold=0.5),
    ]
    table = claims_table(mine, {"t": path}, tmp_path / "claims.csv", "tiny")
    assert list(table["verdict"]) == ["holds", "holds", "untested"]
    assert summary(table) == ["paper 001: 1 of 1 claims hold", "paper 004: 1 of 2 claims hold, 1 untested"]


def test_regime_flags_name_each_departure_from_the_papers_setting():
    from pipelib.report import regime

    paper_size = {"method": "FedMD-NFDP", "rounds": 20, "public_per_round": 5000, "n": 300}
    assert regime.fedmd(paper_size, "CIFAR-10") == ""
    reduced = {**paper_size, "rounds": 6, "public_per_round": 500, "n": 364}
    # the budget is compute where the queries cost no privacy (NP, NFDP), regime where it sets the noise (LDP)
    assert regime.fedmd(reduced, "FEMNIST") == "party size n = 364 (paper 2,880)"
    assert regime.fedmd({**reduced, "n": 300}, "CIFAR-10") == ""
    budget = "distillation budget 6 x 500 public queries (paper 20 x 5,000)"
    assert regime.fedmd_compute(reduced) == budget and regime.fedmd_compute(paper_size) == ""
    ldp = {**reduced, "method": "FedMD-LDP", "n": 300}
    assert regime.fedmd(ldp, "CIFAR-10") == budget and regime.fedmd_compute(ldp) == ""
    assert regime.fedmd({"method": "Centralized", "n": 3000}, "CIFAR-10") == ""  # the pooled 10 x 300
    assert regime.ldpfl({"dataset": "MNIST", "clients": 100, "n": 600, "rounds": 10}) == ""
    assert regime.ldpfl({"dataset": "MNIST", "clients": 8, "n": 100, "rounds": 10}) == (
        "clients 8 (paper 100); records per client 100 (paper 600)"
    )
    assert regime.ldpdl({"method": "PATE", "owners": 250}) == ""
    assert regime.ldpdl({"method": "LDP-DL", "owners": 40, "queries": 1000}) == "owners L 40 (paper 10,000)"
    assert regime.rknn({"dataset": "CIFAR-10", "n": 28000, "public_n": 30000}) == ""  # within 10 %
    assert (
        regime.rknn({"dataset": "CIFAR-10", "n": 20000, "public_n": 30000}) == "private records 20,000 (paper 29,000)"
    )
    assert regime.rknn({"dataset": "MNIST", "n": 3000, "public_n": 5000}) == "private records 3,000 (paper 60,000)"
    assert regime.rknn({"dataset": "FEMNIST", "n": 4000, "public_n": 1000}) == "FEMNIST is not a dataset of paper 003"
    # a figure's rows carry the regime of its table's rows of the same dataset
    table = pd.DataFrame({"dataset": ["A", "A", "B"], "method": ["LDP-DL", "PATE", "LDP-DL"], "regime": ["x", "y", ""]})
    figure = pd.DataFrame({"dataset": ["A", "B", "C"]})
    unknown = "regime unknown: no table_ldpdl row of this dataset in this run"
    assert list(regime.of_figure("p004_a", figure, {"table_ldpdl": table})) == ["x", "", unknown]
    assert set(regime.of_figure("p004_a", figure, {})) == {unknown}
    assert regime.of_figure("p002_privacy_vs_k", figure, {"table_ldpdl": table}) is None


def test_the_reports_first_page_is_the_claims_and_renders_as_snakemake_renders_it(tmp_path):
    """The report's global description (pipelib.report.pages.report_front_page): the per-paper summary and every
    claim, Table 2's rows; Snakemake renders it with Jinja (category links) and then docutils: no error, and the
    claims' own text stays literal (a brace in it is not a template)."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    from pipelib.report.pages import report_front_page

    placeholder = report_front_page(tmp_path, "tiny")
    assert "No claims yet" in placeholder
    assert f"{tmp_path / 'claims.csv'} --configfile presets/tiny.yaml``" in placeholder
    claims = tmp_path / "claims.csv"
    T.to_csv(tmp_path / "t.csv", index=False)
    mine = [
        claim(id="a", kind="greater", a={"method": "pm", "x": 1, "dataset": "A"}, b={"method": "duchi", "x": 1}),
        claim(id="b", kind="at_least", a={"method": "laplace"}, threshold=0.5, claim="a {{ brace }} | bar"),
    ]
    claims_table(mine, {"t": tmp_path / "t.csv"}, claims, "tiny")
    rows = [["FEMNIST", "FedMD-NFDP", 16, 0.044, 0.043, 0.5, 0.45, 0.55, 0.8064]]
    cols = ["dataset", "method", "k", "epsilon", "delta", "accuracy", "accuracy_low", "accuracy_high"]
    pd.DataFrame(rows, columns=[*cols, "paper_accuracy"]).to_csv(tmp_path / "table2.csv", index=False)
    rst = report_front_page(tmp_path, "tiny")

    class Category:
        name = "Paper 004"

    text = Environment().from_string(rst).render(categories={Category(): {}}, files=[])
    text += "\n.. _claims.csv: #claims\n.. _table2.csv: #table2\n.. _Paper 004: #paper004\n"
    html = publish_parts(text, writer_name="html", settings_overrides={"halt_level": 2})["html_body"]
    assert "paper 004: 1 of 2 claims hold, 1 untested" in html and "a {{ brace }} | bar" in html
    assert "0.5 [0.450, 0.550]" in html and 'href="#paper004"' in html


def test_a_claim_over_many_groups_lists_the_ends_and_what_does_not_hold():
    from pipelib.report.claims import MAX_GROUPS

    rows = [["A", x, "pm", 0.9, 0.89, 0.91, ""] for x in range(20)]
    rows += [["A", x, "duchi", *((0.5, 0.49, 0.51) if x != 7 else (0.95, 0.94, 0.96)), ""] for x in range(20)]
    c = claim(kind="greater", a={"method": "pm"}, b={"method": "duchi"}, per=("x",))
    row = verdict(c, frame(rows))
    assert row["verdict"] == "does not hold" and row["numbers"].count("vs") == 3 < MAX_GROUPS
    assert row["numbers"].startswith("0: 0.900 [0.890, 0.910] vs 0.500 [0.490, 0.510]; 7: 0.900")
    assert row["numbers"].endswith("; and 17 more groups (17 holds)")


def test_a_threshold_missed_at_a_ceiling_below_it_is_untested():
    """An at_least claim missed by a row that sits at its ceiling (reverse k-NN's cluster purity: one label per
    cluster, so no mechanism labels better), where the ceiling is below the threshold, tests the representation,
    not the method: untested.  A row well below its ceiling keeps its verdict (the method lost accuracy), a row
    that reaches the threshold holds, and the ceiling is printed with the numbers."""
    rows = pd.DataFrame(
        {
            "encoder": ["a", "b", "c", "d"],
            "label_accuracy": [0.9696, 0.99, 0.90, 0.40],
            "cluster_purity": [0.9696, 0.96, 0.99, 0.62],
        }
    )
    c = claim(kind="at_least", a={"encoder": "a"}, metric="label_accuracy", threshold=0.97, ceiling="cluster_purity")
    v = verdict(c, rows)
    assert v["verdict"] == "untested"
    assert v["why"] == (
        "0.9696 against 0.97 (cluster_purity 0.9696): at its cluster_purity, which is below the threshold before any "
        "noise"
    )
    assert verdict(claim(**{**c.__dict__, "ceiling": None}), rows)["verdict"] == "does not hold"
    assert verdict(claim(**{**c.__dict__, "a": {"encoder": "b"}}), rows)["verdict"] == "holds"
    assert verdict(claim(**{**c.__dict__, "a": {"encoder": "c"}}), rows)["verdict"] == "does not hold"
    far = verdict(claim(**{**c.__dict__, "a": {"encoder": "d"}}), rows)  # 22 points lost below its ceiling
    assert far["verdict"] == "does not hold" and far["numbers"] == "0.400 against 0.97 (cluster_purity 0.62)"
    with pytest.raises(ValueError, match="a ceiling applies to kind at_least only"):
        claim(kind="at_most", a={}, threshold=0.5, ceiling="cluster_purity")


def test_table_pages_mark_the_rows_outside_the_regime(tmp_path):
    """The generated table pages mark every row whose setting departs from its paper's regime (R1, R2, ... in
    a regime column) and spell each departure out once below the table; rows in the regime stay unmarked."""
    from pipelib.report.pages import regime_marks, table_rknn_page

    t = pd.DataFrame(
        {"regime": ["", "private records 20,000 (paper 29,000)", "", "public records 1,000 (paper 5,000)"]}
    )
    marks, note = regime_marks(t.assign(regime=t["regime"].replace("", None)))
    assert marks == ["", "R1", "", "R2"]
    assert note[2:4] == ["- R1: private records 20,000 (paper 29,000)", "- R2: public records 1,000 (paper 5,000)"]
    assert regime_marks(t.assign(regime=""))[1] == [] and regime_marks(t.drop(columns="regime"))[0] == [""] * 4
    rows = t.assign(
        dataset="MNIST",
        scenario="s",
        encoder="hog",
        s=10,
        k=1,
        mechanism="rr",
        epsilon=1.0,
        cluster_purity=0.9,
        label_accuracy=0.8,
        accuracy=0.7,
        accuracy_low=0.6,
        accuracy_high=0.8,
        paper_label_accuracy=None,
        paper_accuracy=0.9,
        wall_seconds=1.0,
        preset="tiny",
        hardware="cpu",
        device="cpu",
        seed=0,
    )
    rows.to_csv(tmp_path / "t.csv", index=False)
    page = table_rknn_page(tmp_path / "t.csv", "cmd")
    assert "| -20.0 | R1 | 1 s |" in page and "- R2: public records 1,000 (paper 5,000)" in page


def test_each_figure_states_the_regime_of_its_rows(tmp_path):
    """Under each figure its page says where its rows depart from the paper's regime, per dataset, from its
    table's rows of the same dataset; a closed-form figure says nothing, a missing table says 'unknown'."""
    from pipelib.report.pages import figure_regime

    pd.DataFrame(
        {"dataset": ["MNIST", "CIFAR-10", "CIFAR-10"], "regime": [None, "private records 20,000 (paper 29,000)", None]}
    ).to_csv(tmp_path / "table_rknn.csv", index=False)
    (line, _) = figure_regime("p003_local_dp", {"table_rknn": tmp_path / "table_rknn.csv"})
    assert line == (
        "Regime of its rows (those of table_rknn of the same dataset): CIFAR-10: private records 20,000 "
        "(paper 29,000); MNIST: in the paper’s regime."
    )
    # with the figure's data, only the datasets it plots
    pd.DataFrame({"dataset": ["MNIST", "SVHN"], "accuracy": [0.5, 0.6]}).to_csv(tmp_path / "p003.csv", index=False)
    (line, _) = figure_regime("p003_local_dp", {"table_rknn": tmp_path / "table_rknn.csv"}, tmp_path / "p003.csv")
    assert line == (
        "Regime of its rows (those of table_rknn of the same dataset): MNIST: in the paper’s regime; "
        "SVHN: regime unknown: no table_rknn row of this dataset in this run."
    )
    assert figure_regime("p002_privacy_vs_k", {}) == []
    assert figure_regime("p004_mnist", {"table_ldpdl": None})[0].startswith("Regime: unknown (no table_ldpdl.csv")


def test_compare_rows_are_flagged_against_their_own_papers_setting():
    """compare.csv's regime column: each method against its own paper (FedMD's budget and party size on its
    (public, private) pair, reverse k-NN's records, LDP-DL's owners and queries, LDP-FL's clients), a dataset
    the method's paper never used flagged as such, and the baselines without a paper setting unflagged."""
    from pipelib.report.regime import of_row

    fedmd = {"method": "FedMD-NFDP", "public_dataset": "mnist", "private_dataset": "femnist_letters", "n": 2880}
    assert of_row({**fedmd, "rounds": 20, "public_per_round": 5000}) == ""
    assert of_row({**fedmd, "rounds": 6, "public_per_round": 500}) == ""  # compute: the queries cost no privacy
    ldp = {**fedmd, "method": "FedMD-LDP", "rounds": 6, "public_per_round": 500}
    assert of_row(ldp).startswith("distillation budget 6 x 500")
    ldpdl = {"method": "LDP-DL", "private_dataset": "mnist", "owners": 10, "queries": 1000}
    assert of_row(ldpdl) == "owners L 10 (paper 10,000)"
    assert of_row({**ldpdl, "private_dataset": "femnist_letters"}) == "femnist_letters is not a dataset of paper 004"
    ldpfl = {"method": "LDP-FL", "private_dataset": "mnist", "clients": 10, "n": 600, "rounds": 10}
    assert of_row(ldpfl) == "clients 10 (paper 100)"
    rknn = {"method": "reverse k-NN", "private_dataset": "mnist", "n": 60000, "public_n": 5000}
    assert of_row(rknn) == "" and of_row({"method": "DP-SGD"}) == "" and of_row({"method": "PATE"}) == ""
