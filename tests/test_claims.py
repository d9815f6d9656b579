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
    assert summary(table) == ["paper 001: trained 1 of 1 holds", "paper 004: trained 1 of 2 holds, 1 untested"]


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
    assert "paper 004: trained 1 of 2 holds, 1 untested" in html and "a {{ brace }} | bar" in html
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


def test_table2_marks_each_rows_flags_once_and_spells_them_out_below():
    """A flag shared by every row of a dataset (its utility floor) is a mark in the row and one line below the
    table, not a paragraph repeated in each row; a row with two flags carries both marks."""
    from pipelib.report.pages import flag_marks

    floor, sub = "utility floor: FedMD-NP 0.808 (paper 0.962)", "substitute: ridge heads"
    t = pd.DataFrame({"flags": [floor, floor, f"{floor}; {sub}", None]})
    marks, note = flag_marks(t)
    assert marks == ["F1", "F1", "F1, F2", ""]
    assert note[2:4] == [f"- F1: {floor}", f"- F2: {sub}"]
    assert flag_marks(t.assign(flags=""))[1] == [] and flag_marks(t.drop(columns="flags"))[0] == [""] * 4


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


# ---------------------------------------------------------------- issue 52: row flags and test kinds


def rows(*records, columns=("dataset", "x", "method", "accuracy", "accuracy_low", "accuracy_high")):
    return pd.DataFrame(records, columns=list(columns))


def test_a_gap_to_the_noise_free_row_is_not_the_private_rows_own_trend():
    """p001_more_clients_closer_to_noise_free: the paper claims the gap to noise-free shrinks with more clients;
    the private rows alone barely rise here, so 'increasing' cannot tell while the gap kind can."""
    t = rows(
        ["A", 10, "private", 0.900, 0.890, 0.910],
        ["A", 50, "private", 0.905, 0.895, 0.915],
        ["A", 100, "private", 0.910, 0.900, 0.920],
        ["A", 10, "none", 0.990, 0.980, 1.000],
        ["A", 50, "none", 0.950, 0.940, 0.960],
        ["A", 100, "none", 0.920, 0.910, 0.930],
    )
    gap = claim(kind="gap", a={"method": "private"}, b={"method": "none"}, x="x", direction="decreasing")
    v = verdict(gap, t)
    assert v["verdict"] == "holds" and v["numbers"].startswith("gap x 10: 0.090")
    assert verdict(claim(kind="increasing", a={"method": "private"}, x="x"), t)["verdict"] == "inconclusive"
    with pytest.raises(ValueError, match="needs a direction"):
        claim(kind="gap", a={"method": "private"}, b={"method": "none"}, x="x")


def test_a_run_that_diverged_leaves_its_claim_untested():
    """p001_fraction_no_effect_mnist: a run at chance through our bias range decided 'does not hold'."""
    from pipelib.report import flags

    t = rows(["MNIST", 0.1, "LDP-FL", 0.103, 0.097, 0.109], ["MNIST", 1.0, "LDP-FL", 0.934, 0.929, 0.939])
    t["peak_accuracy"], t["peak_round"] = [0.891, 0.934], [4, 10]
    c = claim(kind="within", a={"x": 0.1}, b={"x": 1.0}, tolerance=0.02)
    assert verdict(c, t)["verdict"] == "does not hold"
    t["flags"] = [flags.diverged(r) for r in t.to_dict("records")]
    v = verdict(c, t)
    assert v["verdict"] == "untested" and v["why"] == "rows flagged: diverged"
    assert v["flags"] == "diverged: peak 0.891 at round 4, final 0.103"


def test_a_utility_floor_under_the_papers_noise_free_model_leaves_its_claims_untested():
    """p001_fixed_range_fails_cifar10: 'at most 0.25' held on rows whose noise-free FedAvg reaches only 0.230."""
    from pipelib.report import flags

    t = pd.DataFrame(
        {
            "dataset": ["CIFAR-10", "CIFAR-10", "MNIST"],
            "method": ["FedAvg", "LDP-FL", "FedAvg"],
            "accuracy": [0.230, 0.180, 0.97],
            "accuracy_low": [0.22, 0.17, 0.96],
            "accuracy_high": [0.24, 0.19, 0.98],
            "paper_accuracy": [0.6255, None, 0.9721],
        }
    )
    c = claim(kind="at_most", a={"dataset": "CIFAR-10", "method": "LDP-FL"}, threshold=0.25)
    assert verdict(c, t)["verdict"] == "holds"
    t["flags"] = flags.ldpfl(t)
    assert list(t["flags"]) == ["utility floor: noise-free FedAvg 0.230 (paper 0.625)"] * 2 + [""]
    assert verdict(c, t)["verdict"] == "untested"
    about_the_reference = claim(kind="at_least", a={"method": "FedAvg", "dataset": "CIFAR-10"}, threshold=0.5)
    accepted = verdict(claim(**{**about_the_reference.__dict__, "accepts": ("utility floor",)}), t)
    assert accepted["verdict"] == "does not hold"  # a claim about the reference itself keeps its verdict


def test_a_private_row_at_its_non_private_reference_is_at_ceiling():
    """p003_mnist_beats_baselines: the private and the non-private student are the same 0.9492."""
    from pipelib.report import flags

    t = pd.DataFrame(
        {
            "dataset": ["MNIST", "MNIST"],
            "encoder": ["umap_digits"] * 2,
            "s": [40, 40],
            "k": [1, 1],
            "mechanism": ["none", "laplace"],
            "accuracy": [0.9492, 0.9492],
            "accuracy_low": [0.9447, 0.9447],
            "accuracy_high": [0.9534, 0.9534],
        }
    )
    c = claim(kind="at_least", a={"mechanism": "laplace"}, threshold=0.988)
    assert verdict(c, t)["verdict"] == "does not hold"
    t["flags"] = flags.rknn(t)
    v = verdict(c, t)
    assert v["verdict"] == "untested" and "at ceiling" in v["why"]


def test_substitute_teachers_and_a_box_that_clips_the_initial_model_are_flagged():
    """p004_ldpdl_beats_pate on stand-in teachers; p001_near_noise_free_fmnist on a box holding 32 % of the
    initial weights (our He initialisation)."""
    from pipelib.report import flags

    t = pd.DataFrame(
        {
            "dataset": ["CIFAR-10"] * 2,
            "method": ["LDP-DL", "PATE"],
            "accuracy": [0.30, 0.20],
            "accuracy_low": [0.29, 0.19],
            "accuracy_high": [0.31, 0.21],
            "teacher_departure": ["ridge heads on HOG (paper: ResNet50)", None],
        }
    )
    c = claim(kind="greater", a={"method": "LDP-DL"}, b={"method": "PATE"})
    assert verdict(c, t)["verdict"] == "holds"
    t["flags"] = flags.ldpdl(t)
    assert verdict(c, t)["verdict"] == "untested"
    assert verdict(claim(**{**c.__dict__, "accepts": ("substitute",)}), t)["verdict"] == "holds"
    assert flags.clipped_box({"init_in_box": 0.32, "init": "he"}) == (
        "substitute: the fixed box holds 32% of the initial weights (he initialisation)"
    )
    assert flags.clipped_box({"init_in_box": 0.84}) == "" and flags.clipped_box({}) == ""


def test_a_figure_inherits_its_tables_dataset_level_flags_and_keeps_its_runs_own():
    from pipelib.report import flags

    table = pd.DataFrame(
        {"dataset": ["A", "B"], "method": ["FedAvg"] * 2, "accuracy": [0.2, 0.9], "paper_accuracy": [0.6, 0.91]}
    ).assign(range="none")
    figure = pd.DataFrame({"dataset": ["A", "B", "B"], "accuracy": [0.2, 0.5, 0.9], "peak_accuracy": [0.2, 0.8, 0.9]})
    figure["peak_round"] = 3
    got = list(flags.of_source("p001_clients", figure, {"table_ldpfl": table}))
    assert got == [
        "utility floor: noise-free FedAvg 0.200 (paper 0.600)",
        "diverged: peak 0.800 at round 3, final 0.500",
        "",
    ]


def test_a_fixed_range_row_at_the_accuracy_its_box_allows_is_at_ceiling_and_so_is_its_figure_row():
    """p001_adaptive_beats_fixed_fmnist (issue 51): the fixed eps-5 row 0.7013 sits at the noise-free run
    clipped to the same box (0.7010), 14 points under unclipped averaging: the box against our model sets it.
    Where the box costs nothing measurable (MNIST here), nothing is flagged; Figures 3-5's points of the same
    setting and box carry the flag."""
    from pipelib.report import flags

    def row(dataset, method, range_, acc, half, run, eps=None):
        return {
            "dataset": dataset,
            "method": method,
            "range": range_,
            "accuracy": acc,
            "accuracy_low": acc - half,
            "accuracy_high": acc + half,
            "paper_epsilon": eps,
            "scenario": f"s_{dataset}",
            "run": run,
            "fraction": 1.0,
            "rounds": 15,
        }

    t = pd.DataFrame(
        [
            row("Fashion-MNIST", "FedAvg", "none", 0.8442, 0.007, "none"),
            row("Fashion-MNIST", "FedAvg", flags.BOX, 0.7010, 0.009, "clip-c0.0-r0.015"),
            row("Fashion-MNIST", "LDP-FL", "fixed", 0.7013, 0.009, "twopoint-eps5.0-c0.0-r0.015", 5.0),
            row("Fashion-MNIST", "LDP-FL", "fixed", 0.6500, 0.009, "twopoint-eps10.0-c0.0-r0.015", 10.0),
            row("Fashion-MNIST", "LDP-FL", "adaptive", 0.8300, 0.007, "twopoint-eps5.0-adaptive", 5.0),
            row("MNIST", "FedAvg", "none", 0.970, 0.004, "none"),
            row("MNIST", "FedAvg", flags.BOX, 0.968, 0.004, "clip-c0.0-r0.075"),
            row("MNIST", "LDP-FL", "fixed", 0.967, 0.004, "twopoint-eps5.0-c0.0-r0.075", 5.0),
        ]
    )
    t["flags"] = flags.ldpfl(t)
    ceiling = (
        "at ceiling: noise-free averaging clipped to the same box reaches 0.7010 (unclipped 0.8442): the box, "
        "not the coins, sets this row"
    )
    assert list(t["flags"]) == ["", "", ceiling, "", "", "", "", ""]  # eps 10 under the box's: the coins cost
    c = shipped("p001_adaptive_beats_fixed_fmnist")
    v = verdict(c, t[t["paper_epsilon"] == 5.0].assign(paper_epsilon=5.0))
    assert v["verdict"] == "untested" and v["why"] == "rows flagged: at ceiling"
    # Figures 3-5: every fixed-box point of Table 1's setting is held against the same clipped run, whatever its
    # epsilon; a point at another fraction of clients, another box or far under the box's accuracy is not
    point = {**t.iloc[2].drop("flags").to_dict(), "range": "c=0, r=0.015", "x": 200}
    figure = pd.DataFrame(
        [
            point,
            {**point, "run": "twopoint-eps1.0-c0.0-r0.015"},
            {
                **point,
                "run": "twopoint-eps1.0-c0.0-r0.015",
                "accuracy": 0.60,
                "accuracy_low": 0.59,
                "accuracy_high": 0.61,
            },
            {**point, "fraction": 0.5},
            {**point, "run": "twopoint-eps5.0-c0.0-r0.03"},
            {**point, "run": "twopoint-eps5.0-adaptive"},
            {**point, "rounds": float("nan")},
        ]
    )
    got = list(flags.of_source("p001_clients", figure, {"table_ldpfl": t}))
    assert got == [ceiling, ceiling, "", "", "", "", ""]


def test_the_preset_largest_value_is_a_filter():
    """p004_pm_nq_slight looked for N_Q = 100 where the reduced preset's largest is 60: untested for nothing."""
    t = rows(["A", 10, "pm", 0.90, 0.89, 0.91], ["A", 30, "pm", 0.85, 0.84, 0.86], ["A", 60, "pm", 0.82, 0.81, 0.83])
    fixed = claim(kind="within", a={"x": 10}, b={"x": 100}, tolerance=0.03)
    assert verdict(fixed, t)["verdict"] == "untested"
    assert verdict(claim(**{**fixed.__dict__, "b": {"x": "max"}}), t)["verdict"] == "does not hold"


def test_a_claimed_magnitude_is_a_margin_and_a_one_sided_loss_is_one_sided():
    t = rows(
        ["A", 1, "adaptive", 0.60, 0.59, 0.61], ["A", 1, "fixed", 0.46, 0.45, 0.47], ["A", 1, "np", 0.55, 0.54, 0.56]
    )
    by45 = claim(kind="greater", a={"method": "adaptive"}, b={"method": "fixed"}, margin=0.45)
    assert verdict(by45, t)["verdict"] == "does not hold"  # 14 points, not 45
    assert verdict(claim(**{**by45.__dict__, "margin": 0.0}), t)["verdict"] == "holds"
    # 'within 1 point of noise-free' is a loss: being 5 points above is none
    two_sided = claim(kind="within", a={"method": "adaptive"}, b={"method": "np"}, tolerance=0.01)
    assert verdict(two_sided, t)["verdict"] == "does not hold"
    assert verdict(claim(**{**two_sided.__dict__, "side": "below"}), t)["verdict"] == "holds"


def test_always_is_a_share_of_the_groups_above_the_chance_floor():
    """p004_pm_beats_laplace: PM leads at 35 of 36 points; single-seed intervals overlap at many; one reversal
    inside the intervals; some points at chance.  'Every group separates' could never hold."""
    recs = []
    for x in range(36):
        pm, lap = (0.8, 0.6) if x < 20 else (0.7, 0.69) if x < 35 else (0.69, 0.70)
        recs += [["A", x, "pm", pm, pm - 0.02, pm + 0.02], ["A", x, "laplace", lap, lap - 0.02, lap + 0.02]]
    recs += [["A", 99, "pm", 0.11, 0.09, 0.13], ["A", 99, "laplace", 0.12, 0.10, 0.14]]
    t = rows(*recs)
    c = claim(kind="greater", a={"method": "pm"}, b={"method": "laplace"}, per=("x",), always=True, chance=0.1)
    v = verdict(c, t)
    assert v["verdict"] == "holds"
    assert v["why"].startswith("a leads at 35 of 36 distinct points (20 separated, 0 against); 1 of 37 groups left out")
    assert verdict(claim(**{**c.__dict__, "always": False}), t)["verdict"] == "inconclusive"
    against = rows(*recs, ["A", 50, "pm", 0.5, 0.49, 0.51], ["A", 50, "laplace", 0.7, 0.69, 0.71])
    assert verdict(c, against)["verdict"] == "does not hold"


def test_a_trend_reads_every_point_and_shared_points_count_once():
    zigzag = rows(*[["A", x, "pm", a, a - 0.01, a + 0.01] for x, a in zip(range(6), [0.5, 0.9, 0.5, 0.9, 0.5, 0.9])])
    v = verdict(claim(kind="increasing", a={"method": "pm"}, x="x"), zigzag)
    assert v["verdict"] == "inconclusive" and "6 points, rank correlation +0.29" in v["numbers"]
    assert verdict(claim(kind="increasing", a={"method": "pm"}, x="x"), zigzag.iloc[[0, 5]])["verdict"] == "holds"
    # a default point (epsilon 8, N_Q 30) in two sweeps is one group
    t = pd.DataFrame(
        {
            "sweep": ["epsilon", "epsilon", "per_query", "per_query", "per_query", "per_query"],
            "x": [8, 8, 30, 30, 60, 60],
            "epsilon": [8, 8, 8, 8, 8, 8],
            "per_query": [30, 30, 30, 30, 60, 60],
            "mechanism": ["pm", "duchi"] * 3,
            "accuracy": [0.9, 0.8, 0.9, 0.8, 0.85, 0.7],
            "accuracy_low": [0.89, 0.79, 0.89, 0.79, 0.84, 0.69],
            "accuracy_high": [0.91, 0.81, 0.91, 0.81, 0.86, 0.71],
        }
    )
    c = claim(kind="greater", a={"mechanism": "pm"}, b={"mechanism": "duchi"}, per=("sweep", "x"))
    assert verdict(c, t)["numbers"].count(" vs ") == 3
    once = verdict(claim(**{**c.__dict__, "distinct": ("epsilon", "per_query", "mechanism")}), t)
    assert once["numbers"].count(" vs ") == 2


def test_closed_forms_are_exact_and_summarised_apart():
    t = pd.DataFrame({"k": [2, 2], "sampling": ["with", "without"], "epsilon": [0.5, 0.7]})
    c = claim(kind="greater", a={"sampling": "without"}, b={"sampling": "with"}, metric="epsilon", paper="002")
    v = verdict(c, t)
    assert v["verdict"] == "holds" and v["why"] == "exact values (closed form)" and v["form"] == "closed form"
    trained = verdict(claim(kind="at_least", a={"method": "pm", "x": 8}, threshold=0.85, paper="002"), T[:2])
    flagged = {**trained, "verdict": "untested", "flags": "diverged: peak", "why": "rows flagged: diverged"}
    table = pd.DataFrame([v, trained, flagged])
    assert summary(table) == [
        "paper 002: trained 1 of 2 holds, 1 untested; closed form 1 of 1 holds",
        "untested on flagged rows: diverged 1",
    ]
    assert "single seed" in trained["why"]  # the rows carry no seeds column


def test_a_value_the_paper_states_is_within_a_tolerance_on_both_sides():
    """'log10 epsilon close to -2': within 0.25 of the printed value, two-sided, so the ln value (-2.001) holds
    and the log10 misreading of the same epsilon (-2.36) does not."""
    near = claim(kind="within", a={"parties": 10}, metric="log10_epsilon", threshold=-2, tolerance=0.25, paper="002")
    ln = pd.DataFrame({"parties": [10], "log10_epsilon": [-2.001]})
    v = verdict(near, ln)
    assert v["verdict"] == "holds" and v["numbers"] == "-2.001 vs -2 (within 0.25?)" and v["form"] == "closed form"
    assert verdict(near, ln.assign(log10_epsilon=-2.36))["verdict"] == "does not hold"
    assert verdict(near, ln.assign(log10_epsilon=-1.70))["verdict"] == "does not hold"  # the other side too
    with pytest.raises(ValueError, match="kind within needs rows b or a threshold value"):
        claim(kind="within", a={"parties": 10}, tolerance=0.25)


def test_a_headline_cell_against_the_paper_tightens_near_100_percent():
    """FEMNIST Centralized 0.946 against the paper's 0.980 is a miss; CIFAR-10 NFDP 0.73 against 0.744 is not."""
    from pipelib.report.claims import headline_tolerance

    assert headline_tolerance(0.98) == 0.01 and headline_tolerance(0.744) == pytest.approx(0.0512)
    t = pd.DataFrame(
        {
            "dataset": ["FEMNIST", "CIFAR-10", "CIFAR-10"],
            "method": ["Centralized", "FedMD-NFDP", "FedMD-LDP"],
            "accuracy": [0.946, 0.73, 0.2],
            "accuracy_low": [0.94, 0.71, 0.18],
            "accuracy_high": [0.952, 0.75, 0.22],
            "paper_accuracy": [0.98, 0.744, None],
        }
    )
    v = verdict(claim(kind="headline", a={}, per=("dataset", "method")), t)
    assert v["verdict"] == "does not hold"
    assert "CIFAR-10, FedMD-NFDP: 0.730 [0.710, 0.750] vs paper 0.744 (within 0.0512?)" in v["numbers"]
    assert "FedMD-LDP" not in v["numbers"]  # a row the paper prints no value for is not a headline
    assert verdict(claim(kind="headline", a={"method": "FedMD-NFDP"}), t)["verdict"] == "holds"


def test_label_accuracy_against_a_threshold_reads_its_interval(tmp_path):
    """p003_mnist_label_accuracy_above_097: 0.9702 against 0.97 flipped with a CPU's last bits."""
    import json

    from pipelib.privacy import NO_PRIVACY
    from pipelib.report.tables import table_rknn
    from pipelib.schema import result_row

    path = tmp_path / "r.json"
    row = {"dataset": "MNIST", "s": 40, "k": 1, "mechanism": "laplace", "epsilon": 0.1, "encoder": "umap_digits"}
    row |= {"accuracy": 0.95, "test_n": 10000, "label_accuracy": 0.9702, "public_n": 5000, "n": 60000}
    row |= {"method": "reverse k-NN", "scenario": "s", "public_dataset": "mnist", "private_dataset": "mnist"}
    row |= {"preset": "tiny", "seed": 0, "wall_seconds": 1.0, "device": "cpu"}
    path.write_text(json.dumps(result_row(NO_PRIVACY, **row)))
    t = table_rknn(["MNIST"], [path], tmp_path / "t.csv", 1e-5)
    assert t["label_accuracy_low"][0] < 0.97 < t["label_accuracy_high"][0]
    c = claim(kind="at_least", a={"encoder": "umap_digits"}, metric="label_accuracy", threshold=0.97)
    assert verdict(c, t)["verdict"] == "inconclusive"
    assert verdict(c, t.drop(columns=["label_accuracy_low", "label_accuracy_high"]))["verdict"] == "holds"


def test_an_inconclusive_claim_on_repeated_rows_says_how_many_seeds_would_decide_it():
    """Two rows of 3 seeds each, 1 point apart with a seed spread of 1 point and intervals of +-2.5 points: by
    the verdict's own rule the two intervals must fall apart, each half-width at n seeds being
    hypot(t(n - 1) * 0.01 / sqrt(n), what the test records add now), summing under 0.01 from n = 25; never at
    the 3 seeds the inconclusive rows already have."""
    from pipelib.report.claims import seeds_needed

    t = pd.DataFrame(
        {
            "method": ["a", "b"],
            "accuracy": [0.80, 0.79],
            "accuracy_low": [0.775, 0.765],
            "accuracy_high": [0.825, 0.815],
            "accuracy_seed_std": [0.01, 0.01],
            "seeds": [3, 3],
        }
    )
    c = claim(kind="greater", a={"method": "a"}, b={"method": "b"})
    v = verdict(c, t)
    assert v["verdict"] == "inconclusive" and "about 25 seeds a side would decide it" in v["why"]
    assert "single seed" not in v["why"]
    one = verdict(c, t.assign(seeds=1))
    assert "seeds a side" not in one["why"] and "single seed" in one["why"]
    assert seeds_needed(claim(**{**c.__dict__, "margin": 0.01}), type("G", (), {"a": None, "b": None})) is None


def test_a_paper_page_lists_its_papers_claims_checked_on_its_own_rows(tmp_path):
    """paper004.md's claims section: generated from the page's table (per arm), flags named, never typed."""
    from pipelib.report.pages import claims_section

    t = pd.DataFrame(
        {
            "dataset": ["MNIST"] * 3,
            "method": ["LDP-DL", "PATE", "PATE"],
            "teacher_arm": [None, "same", "own"],
            "epsilon": [8.0, 8.0, 8.0],
            "accuracy": [0.96, 0.90, 0.95],
            "accuracy_low": [0.955, 0.895, 0.945],
            "accuracy_high": [0.965, 0.905, 0.955],
            "teacher_departure": ["ridge heads (paper: ResNet50)", "ridge heads (paper: PATE's own)", None],
            "paper_accuracy": [0.988, 0.982, 0.982],
        }
    )
    t.to_csv(tmp_path / "table_ldpdl.csv", index=False)
    lines = claims_section("004", {"table_ldpdl": tmp_path / "table_ldpdl.csv", "p004_mnist": None})
    text = "\n".join(lines)
    assert lines[0] == "## Paper 004's claims on these rows"
    assert "| p004_ldpdl_beats_pate_same_teachers |" in text and "**holds**" in text  # 0.96 over 0.90, same teachers
    beats_own = next(line for line in text.splitlines() if line.startswith("| p004_ldpdl_beats_pate |"))
    assert "**untested**" in beats_own and "rows flagged: substitute" in beats_own


def test_a_closed_form_is_checked_whatever_the_rows_regime():
    t = pd.DataFrame(
        {"k": [2, 2], "sampling": ["with", "without"], "epsilon": [0.5, 0.7], "regime": ["party size n = 364"] * 2}
    )
    c = claim(kind="greater", a={"sampling": "without"}, b={"sampling": "with"}, metric="epsilon")
    assert verdict(c, t)["verdict"] == "holds"
    purity = claim(kind="increasing", a={}, x="k", metric="cluster_purity")
    assert purity.form == "trained"


def test_groups_outside_the_regime_are_left_out_and_still_listed():
    """A headline over Table 2: FEMNIST's rows depart from the paper's party size, so their cells are listed
    (the Centralized miss shows) but the verdict rests on CIFAR-10's cells."""
    t = pd.DataFrame(
        {
            "dataset": ["FEMNIST", "CIFAR-10"],
            "method": ["Centralized", "Centralized"],
            "accuracy": [0.946, 0.88],
            "accuracy_low": [0.93, 0.87],
            "accuracy_high": [0.96, 0.89],
            "paper_accuracy": [0.98, 0.8883],
            "regime": ["pooled records 3,647 (paper 28,800)", ""],
        }
    )
    v = verdict(claim(kind="headline", a={}, per=("dataset", "method")), t)
    assert v["verdict"] == "holds" and "1 of 2 groups left out (1 outside the regime)" in v["why"]
    assert "[outside the regime] FEMNIST, Centralized: 0.946 [0.930, 0.960] vs paper 0.98" in v["numbers"]
    assert verdict(claim(kind="headline", a={"dataset": "FEMNIST"}), t)["why"] == "rows outside the paper's regime"


def test_a_comparison_of_a_row_with_itself_or_of_two_rows_at_chance_is_untested():
    t = rows(["A", 1, "pm", 0.12, 0.10, 0.14], ["A", 2, "pm", 0.11, 0.09, 0.13], ["A", 3, "pm", 0.5, 0.48, 0.52])
    same = verdict(claim(kind="within", a={"x": 1}, b={"method": "pm", "x": 1}, tolerance=0.01), t)
    assert same["verdict"] == "untested" and "same row" in same["why"]
    at_chance = claim(kind="greater", a={"x": 1}, b={"x": 2}, chance=0.1)
    assert verdict(at_chance, t)["why"] == "both sides at the chance floor"
    assert verdict(claim(**{**at_chance.__dict__, "chance": None}), t)["verdict"] == "inconclusive"
    assert verdict(claim(**{**at_chance.__dict__, "b": {"x": 3}}), t)["verdict"] == "does not hold"


def test_distinct_columns_must_exist_and_a_gap_pairs_nominal_x_values():
    t = rows(["A", 1, "pm", 0.5, 0.48, 0.52], ["A", 1, "duchi", 0.3, 0.28, 0.32])
    c = claim(kind="greater", a={"method": "pm"}, b={"method": "duchi"}, per=("x",), distinct=("run",))
    assert verdict(c, t)["why"] == "t has no column run"
    g = rows(
        ["A", 4.99998, "private", 0.70, 0.69, 0.71],
        ["A", 5.0, "none", 0.90, 0.89, 0.91],
        ["A", 7.99953, "private", 0.85, 0.84, 0.86],
        ["A", 8.0, "none", 0.90, 0.89, 0.91],
    )
    gap = claim(kind="gap", a={"method": "private"}, b={"method": "none"}, x="x", direction="decreasing")
    assert verdict(gap, g)["verdict"] == "holds"  # 0.20 -> 0.05: the accountant's 4.99998 pairs with 5


def test_flags_survive_missing_columns_and_take_the_best_reference():
    from pipelib.report import flags

    assert flags.diverged({"peak_accuracy": 0.9, "accuracy": 0.5}) == "diverged: peak 0.900, final 0.500"
    assert list(flags.rknn(pd.DataFrame({"accuracy": [0.5]}))) == [""]
    assert list(flags.fedmd(pd.DataFrame({"accuracy": [0.5]}))) == [""]
    two = pd.DataFrame(
        {"dataset": ["A", "A"], "method": ["FedAvg"] * 2, "accuracy": [0.2, 0.95], "paper_accuracy": [0.97] * 2}
    )
    assert list(flags.ldpfl(two)) == ["", ""]  # the better noise-free run reaches the paper's


def shipped(claim_id):
    return next(c for c in load_claims() if c.id == claim_id)


def test_the_shipped_claims_test_what_issue_52_found_them_testing_wrongly():
    from pipelib.report import flags

    more = shipped("p001_more_clients_closer_to_noise_free")
    assert more.kind == "gap" and more.direction == "decreasing" and more.b == {"panel": "clients", "private": False}
    assert shipped("p003_local_collision_mnist").a["encoder"] == "umap_digits"
    assert "evaluation_only" not in shipped("p002_ldp_near_random_guess").a
    assert shipped("p004_pm_nq_slight").b["x"] == "max" and "sweep" in shipped("p004_pm_nq_slight").per
    assert shipped("p001_adaptive_beats_fixed_cifar10").margin >= 0.4
    # a Fashion-MNIST fixed-box row that holds 32 % of its initial weights: near_noise_free_fmnist untested
    near = shipped("p001_near_noise_free_fmnist")
    assert near.side == "below"
    fig = pd.DataFrame(
        {
            "dataset": ["Fashion-MNIST"] * 2,
            "panel": ["clients"] * 2,
            "x": [200, 200],
            "private": [True, False],
            "accuracy": [0.729, 0.863],
            "accuracy_low": [0.72, 0.856],
            "accuracy_high": [0.738, 0.870],
            "init_in_box": [0.32, None],
        }
    )
    assert verdict(near, fig)["verdict"] == "does not hold"
    fig["flags"] = flags.of_source("p001_clients", fig, {})
    v = verdict(near, fig)
    assert v["verdict"] == "untested" and v["why"] == "rows flagged: substitute"


def test_a_fedmd_row_that_fell_from_its_best_round_is_flagged(tmp_path):
    """table2 carries each row's best round (the seeds' mean party accuracy per round) and flags a drop."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipelib.report import flags
    from pipelib.report.tables import peak_over_seeds

    paths = []
    for seed, curve in enumerate([[0.4, 0.8, 0.6], [0.4, 0.7, 0.5]]):
        rounds = pd.DataFrame({"round": [r for r in range(3) for _ in range(2)], "party": [0, 1] * 3})
        rounds["accuracy"] = [a for a in curve for _ in range(2)]
        paths.append(tmp_path / f"r{seed}.parquet")
        pq.write_table(pa.Table.from_pandas(rounds), paths[-1])
    assert peak_over_seeds(paths) == {"peak_accuracy": pytest.approx(0.75), "peak_round": 1}
    t = pd.DataFrame({"dataset": ["A"], "method": ["FedMD-NFDP"], "accuracy": [0.55], "peak_accuracy": [0.75]})
    t["peak_round"] = 1
    assert list(flags.fedmd(t)) == ["diverged: peak 0.750 at round 1, final 0.550"]


def test_an_encoder_whose_noise_free_student_is_far_under_paper_003s_non_private_one_is_a_utility_floor():
    """Reverse k-NN on HOG features of CIFAR-10: the noise-free student at 0.45 against the paper's 0.823
    cannot carry the paper's trade-off; the MNIST encoder within 0.10 of 0.992 can."""
    from pipelib.report import flags

    t = pd.DataFrame(
        {
            "dataset": ["CIFAR-10", "CIFAR-10", "MNIST", "MNIST"],
            "encoder": ["hog", "hog", "umap_digits", "umap_digits"],
            "s": [500, 500, 40, 40],
            "k": [1] * 4,
            "mechanism": ["none", "laplace", "none", "laplace"],
            "accuracy": [0.45, 0.30, 0.95, 0.90],
            "accuracy_low": [0.44, 0.29, 0.94, 0.89],
            "accuracy_high": [0.46, 0.31, 0.96, 0.91],
        }
    )
    c = claim(kind="at_most", a={"dataset": "CIFAR-10", "mechanism": "laplace"}, threshold=0.79)
    assert verdict(c, t)["verdict"] == "holds"
    t["flags"] = flags.rknn(t)
    floor = "utility floor: non-private labelling on hog 0.450 (paper 0.823)"
    assert list(t["flags"]) == [floor, floor, "", ""]
    assert verdict(c, t)["verdict"] == "untested"


def test_a_student_on_true_labels_under_paper_004s_private_rows_is_a_utility_floor():
    """Paper 004 prints no non-private reference: a student that cannot reach the paper's private accuracy on
    perfect labels (CIFAR-10's 0.45 against 0.797) leaves LDP-DL against PATE untested there."""
    from pipelib.report import flags

    t = pd.DataFrame(
        {
            "dataset": ["CIFAR-10", "CIFAR-10", "MNIST", "MNIST"],
            "method": ["LDP-DL", "PATE", "LDP-DL", "PATE"],
            "accuracy": [0.39, 0.36, 0.958, 0.937],
            "accuracy_low": [0.38, 0.35, 0.954, 0.932],
            "accuracy_high": [0.40, 0.37, 0.962, 0.942],
            "paper_accuracy": [0.797, 0.760, 0.988, 0.982],
            "ceiling_accuracy": [0.45, 0.45, 0.975, 0.975],
        }
    )
    c = claim(kind="greater", a={"method": "LDP-DL"}, b={"method": "PATE"}, per=("dataset",))
    assert verdict(c, t)["verdict"] == "holds"
    t["flags"] = flags.ldpdl(t)
    floor = "utility floor: student on true labels 0.450 (paper's best private row 0.797)"
    assert list(t["flags"]) == [floor, floor, "", ""]
    v = verdict(c, t)  # MNIST decides; CIFAR-10 is left out and named
    assert v["verdict"] == "holds" and "1 of 2 groups left out (1 flagged)" in v["why"]
    assert v["numbers"].startswith("[flagged] CIFAR-10")
    assert verdict(c, t[t.dataset == "CIFAR-10"])["verdict"] == "untested"


def test_paper_004s_page_names_each_datasets_noise_free_reference_and_its_floor():
    from pipelib.report.pages import _ceiling_note

    run = pd.DataFrame(
        {
            "dataset": ["CIFAR-10", "MNIST"],
            "method": ["LDP-DL"] * 2,
            "paper_accuracy": [0.797, 0.988],
            "ceiling_accuracy": [0.428, 0.9604],
            "ceiling_accuracy_low": [0.398, 0.956],
            "ceiling_accuracy_high": [0.459, 0.964],
        }
    )
    (note, _) = _ceiling_note(run)
    assert "CIFAR-10 0.428 [0.398, 0.459]; MNIST 0.960 [0.956, 0.964]" in note
    assert note.endswith("CIFAR-10 (utility floor: student on true labels 0.428 (paper's best private row 0.797)).")
    assert _ceiling_note(run.drop(columns=["ceiling_accuracy"])) == []


def test_counts_of_verdicts_read_as_english():
    from pipelib.report.claims import counted

    assert counted(1, "holds") == "1 holds" and counted(5, "holds") == "5 hold"
    assert counted(1, "holds", 9) == "1 of 9 holds" and counted(5, "holds", 13) == "5 of 13 hold"
    assert counted(6, "does not hold") == "6 do not hold" and counted(1, "does not hold") == "1 does not hold"
    assert counted(2, "inconclusive") == "2 inconclusive" and counted(1, "untested") == "1 untested"


def test_a_p003_figure_inherits_the_floor_of_its_own_encoder_only():
    from pipelib.report import flags

    table = pd.DataFrame(
        {
            "dataset": ["MNIST", "MNIST"],
            "encoder": ["hog", "umap_digits"],
            "s": [40, 40],
            "k": [1, 1],
            "mechanism": ["none", "none"],
            "accuracy": [0.80, 0.95],
            "accuracy_low": [0.79, 0.94],
            "accuracy_high": [0.81, 0.96],
        }
    )
    figure = pd.DataFrame({"dataset": ["MNIST", "MNIST"], "encoder": ["hog", "umap_digits"], "accuracy": [0.7, 0.9]})
    got = list(flags.of_source("p003_local_dp", figure, {"table_rknn": table}))
    assert got == ["utility floor: non-private labelling on hog 0.800 (paper 0.992)", ""]


def test_a_paper_page_opens_with_its_claims_summary(tmp_path):
    from pipelib.report.pages import opening

    t = pd.DataFrame(
        {
            "dataset": ["MNIST", "MNIST"],
            "method": ["LDP-DL", "PATE"],
            "epsilon": [8.0, 8.0],
            "teacher_arm": [None, "own"],
            "accuracy": [0.96, 0.94],
            "accuracy_low": [0.955, 0.935],
            "accuracy_high": [0.965, 0.945],
            "paper_accuracy": [0.988, 0.982],
        }
    )
    t.to_csv(tmp_path / "table_ldpdl.csv", index=False)
    lines = opening("004", {"table_ldpdl": tmp_path / "table_ldpdl.csv"})
    assert lines[0].startswith("**In short**") and lines[2].startswith("- paper 004: trained ")
    assert opening("004", {"table_ldpdl": None}) == []
