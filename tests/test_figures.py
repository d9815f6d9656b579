"""The papers' figures: closed forms against SPECS.md's tabulated values, and every plot written as
PNG and SVG with the data it is drawn from."""

import math

import pandas as pd
import pytest

from pipelib.report import figures as F

# SPECS.md section 1.5, Figure 2(a)-(c): (N, log10 epsilon, log10 delta, log10 sigma) per dataset,
# k = 3, ln, c2 = 1, T = 100,000.
SPECS_FIG2 = {
    "FEMNIST": [
        (1, -3.982, -3.982, 6.963),
        (2, -3.681, -3.681, 6.645),
        (5, -3.283, -3.283, 6.223),
        (10, -2.982, -2.982, 5.901),
    ],
    "CIFAR-10": [
        (1, -3.000, -3.000, 5.920),
        (4, -2.398, -2.399, 5.269),
        (7, -2.155, -2.156, 5.003),
        (10, -2.001, -2.001, 4.833),
    ],
}
# SPECS.md Figure 4 (n = 100): k -> (epsilon without, delta without, epsilon with, delta with).
SPECS_FIG4 = {
    1: (0.0100, 0.01, 0.0100, 0.0100),
    10: (0.1043, 0.10, 0.0995, 0.0956),
    50: (0.6833, 0.50, 0.4975, 0.3950),
    90: (2.2172, 0.90, 0.8955, 0.5953),
    100: (4.6151, 1.00, 0.9950, 0.6340),
}


@pytest.fixture(scope="module")
def fig2():
    return F.privacy_vs_parties_data({"FEMNIST": 28800, "CIFAR-10": 3000}, k=3, parties=10, answers=100000)


@pytest.mark.parametrize("label", list(SPECS_FIG2))
def test_figure2abc_closed_forms_match_specs(fig2, label):
    g = fig2[fig2.dataset == label].set_index("parties")
    for n, eps, delta, sigma in SPECS_FIG2[label]:
        assert g.loc[n, "log10_epsilon"] == pytest.approx(eps, abs=1e-3)
        assert g.loc[n, "log10_delta"] == pytest.approx(delta, abs=1e-3)
        assert g.loc[n, "log10_sigma_paper_formula"] == pytest.approx(sigma, abs=1e-3)


def test_figure2c_exact_sigma_is_the_calibrated_one(fig2):
    from pipelib.privacy import gaussian

    row = fig2[(fig2.dataset == "CIFAR-10") & (fig2.parties == 10)].iloc[0]
    assert row["sigma_exact"] == pytest.approx(gaussian.gaussian_sigma(row["epsilon"], row["delta"], 100000))
    assert (fig2["sigma_exact"] != fig2["sigma_paper_formula"]).all()


def test_figure4_closed_forms_match_specs():
    data = F.privacy_vs_k_data(100)
    for k, (e_wo, d_wo, e_w, d_w) in SPECS_FIG4.items():
        wo = data[(data.k == k) & (data.sampling == "without_replacement")].iloc[0]
        w = data[(data.k == k) & (data.sampling == "with_replacement")].iloc[0]
        assert (wo.epsilon, wo.delta) == (pytest.approx(e_wo, abs=1e-4), pytest.approx(d_wo, abs=1e-4))
        assert (w.epsilon, w.delta) == (pytest.approx(e_w, abs=1e-4), pytest.approx(d_w, abs=1e-4))
    assert len(data) == 200 and (data.groupby("sampling")["epsilon"].apply(lambda s: s.is_monotonic_increasing)).all()


def outputs(tmp_path, name):
    return {"png": tmp_path / f"{name}.png", "svg": tmp_path / f"{name}.svg", "data": tmp_path / f"{name}.csv"}


def written(out):
    assert out["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out["png"].stat().st_size > 5000
    assert b"<svg" in out["svg"].read_bytes()[:2000]
    return pd.read_csv(out["data"])


def test_every_plot_writes_png_svg_and_its_data(tmp_path, fig2):
    F.plot_privacy_vs_parties(fig2, outputs(tmp_path, "a"))
    assert len(written(outputs(tmp_path, "a"))) == 20
    F.plot_privacy_vs_k(F.privacy_vs_k_data(20), outputs(tmp_path, "b"))
    assert len(written(outputs(tmp_path, "b"))) == 40
    first = {k: v.read_bytes() for k, v in outputs(tmp_path, "b").items()}
    F.plot_privacy_vs_k(F.privacy_vs_k_data(20), outputs(tmp_path, "b"))  # drawn again: the same bytes
    assert {k: v.read_bytes() for k, v in outputs(tmp_path, "b").items()} == first
    rows = pd.DataFrame(
        {
            "dataset": ["A", "A", "B"],
            "parties": [2, 5, 5],
            "accuracy": [0.5, 0.6, 0.7],
            "accuracy_std": [0.1, 0.1, 0.0],
            "k": 16,
            "answer": "argmax",
            "scenario": "s",
        }
    )
    data = F.accuracy_vs_parties_data(rows, {("A", 5): 0.75})
    F.plot_accuracy_vs_parties(data, outputs(tmp_path, "c"))
    assert written(outputs(tmp_path, "c"))["paper_accuracy"].notna().sum() == 1
    rounds = pd.DataFrame(
        {
            "dataset": "A",
            "method": "FedMD-NFDP",
            "k": 16,
            "round": [0, 1, 0, 1],
            "party": [0, 0, 1, 1],
            "arch": "x",
            "accuracy": [0.1, 0.2, 0.3, 0.4],
        }
    )
    F.plot_rounds(F.rounds_data(rounds, "FedMD-NFDP", 16), outputs(tmp_path, "d"))
    assert len(written(outputs(tmp_path, "d"))) == 4
    sweep = pd.DataFrame(
        {
            "dataset": "A",
            "sweep": ["s", "s", "k"],
            "s": [10, 20, 10],
            "k": [1, 1, 2],
            "epsilon": 0.1,
            "label_accuracy": [0.5, 0.6, 0.55],
            "accuracy": [0.4, 0.5, 0.45],
            "test_n": 1000,
            "encoder": "hog",
        }
    )
    F.plot_queries_and_neighbours(F.queries_and_neighbours_data(sweep), outputs(tmp_path, "e"))
    data = written(outputs(tmp_path, "e"))
    assert set(data["sweep"]) == {"s", "k"} and (data["accuracy_low"] < data["accuracy"]).all()
    local = pd.DataFrame(
        {
            "dataset": "A",
            "mechanism": ["rr", "collision"],
            "epsilon": [0.4, 0.4],
            "s": 10,
            "k": 1,
            "label_accuracy": [0.3, 0.35],
            "accuracy": [0.3, 0.4],
            "test_n": 1000,
            "encoder": "hog",
        }
    )
    F.plot_local_dp(F.local_dp_data(local, {("A", "collision", 0.4): 0.9}), outputs(tmp_path, "f"))
    assert written(outputs(tmp_path, "f"))["paper_accuracy"].notna().sum() == 1
    assert not math.isnan(fig2["sigma_exact"].sum())


def test_a_selection_without_rows_gives_header_only_tables_and_pages_without_those_figures(tmp_path):
    """A run selection that leaves out every Table 2 dataset: tables 3-5 keep their header, the page says
    which figures have no rows instead of failing."""
    import pandas as pd

    from pipelib.report import pages, tables

    paths = {}
    for name in ("table3", "table4", "table5", "fedmd_budget"):
        paths[name] = tmp_path / f"{name}.csv"
        getattr(tables, name)([], paths[name], 1e-5)
        table = pd.read_csv(paths[name])
        assert table.empty and {"dataset", "accuracy", "paper_accuracy", "epsilon"} <= set(table.columns)
    figures = {"p002_privacy_vs_parties": "figures/p002_privacy_vs_parties.png"}
    page = pages.paper002_page(paths, figures, {name: "cmd" for name in paths})
    assert "![Figure 2(a)-(c)" in page and page.count("No rows of this run selection.") == 3
    assert pages.fedmd_budget_page(paths["fedmd_budget"], {}, "cmd").endswith("No rows of this run selection.\n")


def test_compare_states_each_guarantee_kind_and_the_per_weight_claim():
    from pipelib.privacy.weights import PER_WEIGHT_UNIT
    from pipelib.report.tables import claims

    rows = pd.DataFrame(
        {
            "method": ["FedMD-NFDP", "reverse k-NN", "LDP-DL", "LDP-FL", "FedAvg", "PATE"],
            "adjacency": [
                "replace one record",
                "replace one record",
                "any two inputs of a local randomizer",
                "any two inputs of a local randomizer",
                "none",
                "add/remove one record",
            ],
            "epsilon": [0.5, 1.0, 8.0, 1e5, math.inf, 8.0],
            "paper_epsilon": [None, None, None, 8.0, None, None],
            "paper_protected_unit": [None, None, None, PER_WEIGHT_UNIT, None, None],
        }
    )
    c = claims(rows)
    assert c["guarantee_kind"].tolist() == ["party", "central", "local", "local", "none", "central"]
    assert c["claim_kind"].tolist() == ["party", "central", "local", "per-weight-per-round", "none", "central"]
    assert c["claim_epsilon"].tolist() == [0.5, 1.0, 8.0, 8.0, math.inf, 8.0]


def _complete(row: dict) -> dict:
    """A test's result row with every column the result schema requires (None where the test sets none):
    readers check them (pipelib.schema.read_result)."""
    from pipelib.schema import REQUIRED

    return dict.fromkeys(REQUIRED) | row


def _budget_run(folder, method, k, accuracies, test_n=500, wall_seconds=60.0):
    """A FedMD result row and its rounds table, as the fedmd rule writes them (what fedmd_budget reads)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipelib.privacy import NO_PRIVACY

    folder.mkdir(parents=True)
    row = {**NO_PRIVACY.row(), "method": method, "k": k, "accuracy": float(sum(accuracies) / len(accuracies))}
    row.update(accuracy_std=0.0, test_n=test_n, parties=len(accuracies), wall_seconds=wall_seconds, preset="t", seed=0)
    row.update(device="cpu", hardware="CPU: test", scenario="femnist_iid", run="np" if k is None else f"nfdp-k{k}")
    (folder / "result.json").write_text(json.dumps(_complete(row)))
    final = [{"round": 2, "party": i, "accuracy": a} for i, a in enumerate(accuracies)]
    early = [{"round": 0, "party": i, "accuracy": 0.1} for i in range(len(accuracies))]
    pq.write_table(pa.Table.from_pylist(early + final), folder / "rounds.parquet")
    return folder / "result.json"


def test_fedmd_budget_table_and_its_generated_findings(tmp_path):
    """fedmd_budget.csv: one row per point with the interval over parties and test records, the paper's
    Table 2 value, the paper-size flag; the page's sentences say which gains are inconclusive and which
    budget first comes within 3 points of the paper-size run."""
    from pipelib import stats
    from pipelib.report import pages, tables

    points = {(6, 500, 3): [0.40, 0.45, 0.50], (12, 1000, 3): [0.74, 0.76, 0.78], (20, 5000, 20): [0.76, 0.78, 0.80]}
    entries = []
    for (rounds, queries, epochs), accs in points.items():
        for method, k in (("FedMD-NFDP", 16), ("FedMD-NP", None)):
            folder = tmp_path / f"{method}-{rounds}-{queries}-{epochs}"
            path = _budget_run(folder, method, k, accs, wall_seconds=rounds * queries / 100)
            entries.append(
                {"dataset": "FEMNIST", "run": "x", "rounds": rounds, "public_per_round": queries}
                | {"pretrain_epochs": epochs, "path": str(path)}
            )
    t = tables.fedmd_budget(entries, tmp_path / "fedmd_budget.csv", 1e-5)
    assert list(t["budget"]) == [3000, 3000, 12000, 12000, 100000, 100000]
    assert list(t["paper_size"]) == [False, False, False, False, True, True]
    first = t.iloc[0]
    assert (first["accuracy_low"], first["accuracy_high"]) == pytest.approx(
        stats.mean_accuracy_interval([0.40, 0.45, 0.50], 500)
    )
    assert t.set_index("method")["paper_accuracy"].to_dict() == {"FedMD-NFDP": 0.8064, "FedMD-NP": 0.9615}
    findings = "\n".join(pages.budget_findings(pd.read_csv(tmp_path / "fedmd_budget.csv")))
    assert "FEMNIST FedMD-NFDP: 0.450 at 6 x 500 queries and 3 pre-training epochs, 0.780 at 20 x 5000" in findings
    assert "+33.0 points" in findings  # the intervals of 0.45 and 0.78 do not overlap
    assert "the smallest budget within 3 points of it is 12 x 1000 with 3 pre-training epochs (0.760)" in findings
    assert "Its job took 17 min, 33 times the smallest point's (0.5 min)." in findings  # 1,000 s against 30 s
    page = pages.fedmd_budget_page(tmp_path / "fedmd_budget.csv", {"p002_budget": "figures/p002_budget.png"}, "cmd")
    assert any("0.45 [" in line and "6 x 500" in line for line in page.splitlines())
    assert "![Accuracy against rounds x public queries" in page
    F.p002_budget(outputs(tmp_path, "budget"), tmp_path / "fedmd_budget.csv")
    assert len(written(outputs(tmp_path, "budget"))) == 6


def _ablation_run(folder, per_round: dict, test_n=600):
    """A FedMD-NFDP result row and its rounds table ({round: [party accuracies]}), as fedmd_ablation writes them."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    last = per_round[max(per_round)]
    row = {"method": "FedMD-NFDP", "k": 16, "accuracy": float(sum(last) / len(last)), "epsilon": 0.05, "delta": 0.05}
    row.update(test_n=test_n, parties=len(last), rounds=max(per_round), public_per_round=5000, wall_seconds=60.0)
    row.update(preset="t", seed=0, hardware="CPU: test", precision="fp32", scenario="cifar_iid", run="nfdp-k16")
    (folder / "result.json").write_text(json.dumps(_complete(row)))
    rows = [{"round": t, "party": i, "accuracy": a} for t, accs in per_round.items() for i, a in enumerate(accs)]
    pq.write_table(pa.Table.from_pylist(rows), folder / "rounds.parquet")
    return str(folder / "result.json")


def test_fedmd_ablation_table_pairs_each_variant_with_the_first_and_finds_the_decay(tmp_path):
    """fedmd_ablation.csv: each variant's final accuracy, its peak round, the paired loss after the peak and the
    paired difference to the first variant; the pooled ceiling averages its architectures; the page's sentences
    call a decay and a gain only where the paired interval excludes zero."""
    import json

    from pipelib import stats
    from pipelib.report import pages, tables

    decays = {0: [0.4, 0.4, 0.4, 0.4], 8: [0.60, 0.62, 0.58, 0.61], 20: [0.52, 0.53, 0.50, 0.51]}
    better = {0: [0.4, 0.4, 0.4, 0.4], 8: [0.65, 0.66, 0.63, 0.64], 20: [0.70, 0.71, 0.69, 0.72]}
    noisy = {0: [0.4, 0.4, 0.4, 0.4], 20: [0.50, 0.56, 0.48, 0.55]}
    entries = [
        {
            "dataset": "CIFAR-10",
            "k": 16,
            "variant": name,
            "reference": "shared_adam",
            "paper_k": 16,
            "settings": settings,
            "pretrain_epochs": 20,
            "path": _ablation_run(tmp_path / name, runs),
        }
        for name, settings, runs in (
            ("shared_adam", {"optimizers": "shared"}, decays),
            ("revisit", {"revisit_batch": 1}, better),
            ("noisy", {}, noisy),
        )
    ]
    for arch, acc in (("a", 0.80), ("b", 0.84)):
        folder = tmp_path / f"pooled-{arch}"
        folder.mkdir()
        (folder / "result.json").write_text(
            json.dumps(
                _complete(
                    {
                        "accuracy": acc,
                        "test_n": 600,
                        "wall_seconds": 10.0,
                        "preset": "t",
                        "seed": 0,
                        "hardware": "CPU: test",
                        "precision": "fp32",
                        "scenario": "cifar_iid",
                    }
                )
            )
        )
        entries.append(
            {"dataset": "CIFAR-10", "k": 16, "paper_k": 16, "pooled": [20, 50], "path": str(folder / "result.json")}
        )
    t = tables.fedmd_ablation(entries, tmp_path / "fedmd_ablation.csv").set_index("variant")
    assert t.loc["shared_adam", "peak_round"] == 8 and t.loc["shared_adam", "peak_accuracy"] == pytest.approx(0.6025)
    assert t.loc["shared_adam", "after_peak_high"] < 0 and pd.isna(t.loc["shared_adam", "vs_first"])
    mean, low, high = stats.paired_difference_interval(better[20], decays[20])
    assert (t.loc["revisit", "vs_first"], t.loc["revisit", "vs_first_low"]) == pytest.approx((mean, low))
    assert t.loc["revisit", "after_peak"] == 0 and t.loc["pooled ceiling", "accuracy"] == pytest.approx(0.82)
    assert t.loc["pooled ceiling", "epochs"] == 50 and t.loc["revisit", "settings"] == "revisit_batch=1"
    assert t.loc["noisy", "settings"] == "the preset's loop" and t.loc["revisit", "paper_accuracy"] == 0.744
    text = "\n".join(pages.ablation_findings(pd.read_csv(tmp_path / "fedmd_ablation.csv")))
    assert "it loses accuracy after its peak" in text and "revisit ends at 0.705" in text
    assert "against shared_adam: +19.0 [" in text and "noisy ends at" in text
    assert "against shared_adam: inconclusive" in text  # noisy: +0.8 points with a wide interval
    assert "pooled ceiling (pre-training epochs 20, 50 epochs on the pooled samples) reaches 0.82" in text
    assert "variants whose interval reaches within 5 points of the paper's 0.744: revisit." in text
    assert "where the gap lies: the best variant, revisit at 0.705 [" in text
    page = pages.fedmd_ablation_page(tmp_path / "fedmd_ablation.csv", "cmd")
    assert page.startswith("<!-- generated") and "| CIFAR-10 | 16 | revisit | revisit_batch=1 |" in page


@pytest.mark.parametrize(
    ("ceiling", "best_high", "says"),
    [
        ((0.79, 0.82, 0.85), 0.73, "so the gap is the federated loop's (a ends 13.0 points under the ceiling)"),
        ((0.70, 0.72, 0.735), 0.73, "so at least 0.9 points of the gap are the data's or the models'"),
        ((0.72, 0.75, 0.78), 0.73, "whose interval holds the paper's value"),
        ((0.60, 0.65, 0.70), 0.73, "a ends at or above it: the loop loses nothing measurable against pooling"),
        ((0.79, 0.82, 0.85), 0.75, "a at 0.69 [0.650, 0.750], reaches the paper's 0.744 within its interval."),
    ],
)
def test_the_ablation_says_where_the_gap_to_the_paper_lies(ceiling, best_high, says):
    """The best variant against the pooled ceiling at its own pre-training epochs (the 3-epoch ceiling, under the
    paper in every case, is never the one read): the loop's gap, the data's, or no gap."""
    from pipelib.report import pages

    runs = pd.DataFrame(
        [
            {"variant": "a", "accuracy": 0.69, "accuracy_low": 0.65, "accuracy_high": best_high, "pretrain_epochs": 20},
            {"variant": "b", "accuracy": 0.60, "accuracy_low": 0.55, "accuracy_high": 0.65, "pretrain_epochs": 20},
        ]
    )
    low, acc, high = ceiling
    pooled = pd.DataFrame(
        [
            {"accuracy": 0.5, "accuracy_low": 0.45, "accuracy_high": 0.55, "pretrain_epochs": 3, "epochs": 10},
            {"accuracy": acc, "accuracy_low": low, "accuracy_high": high, "pretrain_epochs": 20, "epochs": 50},
        ]
    )
    (line,) = pages._where_the_gap_is("CIFAR-10, k = 16:", runs, pooled, 0.744)
    assert line.startswith("- CIFAR-10, k = 16: where the gap lies: the best variant, a at 0.69") and says in line


def test_the_gap_is_read_against_the_pooled_ceiling_of_the_best_variants_own_draw():
    from pipelib.report import pages

    runs = pd.DataFrame(
        [{"variant": "a", "accuracy": 0.69, "accuracy_low": 0.65, "accuracy_high": 0.73, "pretrain_epochs": 20,
          "sampling": "stratified_with_replacement"}]
    )  # fmt: skip
    pooled = pd.DataFrame(
        [
            {"accuracy": 0.82, "accuracy_low": 0.79, "accuracy_high": 0.85, "pretrain_epochs": 20, "epochs": 50,
             "sampling": "with_replacement"},
            {"accuracy": 0.72, "accuracy_low": 0.70, "accuracy_high": 0.735, "pretrain_epochs": 20, "epochs": 50,
             "sampling": "stratified_with_replacement"},
        ]
    )  # fmt: skip
    (line,) = pages._where_the_gap_is("CIFAR-10, k = 18:", runs, pooled, 0.744)
    assert "reaches 0.72 [0.700, 0.735], under the paper's value" in line


def test_p004_findings_name_the_leading_line_and_inconclusive_differences():
    from pipelib.report import pages

    data = pd.DataFrame(
        {
            "dataset": "MNIST",
            "sweep": ["epsilon"] * 4,
            "x": [1.0, 8.0, 1.0, 8.0],
            "mechanism": ["pm", "pm", "duchi", "duchi"],
            "aqs": [True, True, True, True],
            "accuracy": [0.50, 0.90, 0.30, 0.895],
            "accuracy_low": [0.49, 0.89, 0.29, 0.885],
            "accuracy_high": [0.51, 0.91, 0.31, 0.905],
        }
    )
    text = "\n".join(pages.ldpdl_sweep_findings(data))
    assert "- epsilon from 1 to 8: PM + AQS 0.500 -> 0.900; Duchi + AQS 0.300 -> 0.895." in text
    assert "epsilon = 1: PM + AQS 0.500, ahead of Duchi + AQS" in text
    assert "epsilon = 8: PM + AQS 0.900, inconclusive against Duchi + AQS" in text


def test_table2_averages_a_rows_seeds_and_verify_checks_the_mean(tmp_path):
    """A Table 2 row run on three seeds (its scenario and <scenario>-s1, -s2): accuracy = the mean of the
    runs, seeds = 3, the interval over the runs' means; ``pipelib verify`` accepts it and names a row whose
    accuracy is not that mean."""
    import json

    from pipelib import stats
    from pipelib.report import tables
    from pipelib.verify import _consistency

    runs, extra = [], {"n": 3000, "rounds": 6, "public_per_round": 500, "answer": "softmax"}
    for i, accs in enumerate(([0.40, 0.50], [0.60, 0.70], [0.45, 0.55])):
        scenario = "femnist_iid" if i == 0 else f"femnist_iid-s{i}"
        result = _budget_run(tmp_path / f"fedmd/{scenario}/softmax/nfdp-with_replacement-k16", "FedMD-NFDP", 16, accs)
        row = json.loads(result.read_text()) | extra | {"scenario": scenario, "sampling": "with_replacement"}
        row["accuracy_any_class"] = row["accuracy"]
        result.write_text(json.dumps(_complete(row)))
        runs.append((str(result), str(result.with_name("rounds.parquet"))))
    datasets = {"FEMNIST": {"scenario": "femnist_iid", "sampling": "with_replacement", "k": [16], "party_archs": []}}
    out = tmp_path / "table2.csv"
    t = tables.table2(datasets, {("FEMNIST", "nfdp-with_replacement-k16"): runs}, {}, out, tmp_path / "r.parquet", 1e-5)
    row = t.iloc[0]
    assert row["seeds"] == 3 and row["accuracy"] == pytest.approx((0.45 + 0.65 + 0.50) / 3)
    low, high = stats.mean_accuracy_interval([0.45, 0.65, 0.50], 500)
    assert (row["accuracy_low"], row["accuracy_high"]) == pytest.approx((low, high))
    assert row["scenario"] == "femnist_iid" and row["paper_accuracy"] == 0.8064
    assert _consistency(tmp_path) == []
    pd.read_csv(out).assign(accuracy=0.45).to_csv(out, index=False)  # the first seed's accuracy alone
    (why,) = [why for _, why in _consistency(tmp_path)]
    assert why.startswith("row FEMNIST FedMD-NFDP k=16: accuracy differs from its result.json (0.45 vs 0.533")


def test_verify_tells_apart_fedmd_ldp_rows_of_one_k_calibrated_to_different_epsilons(tmp_path):
    """Table 2 holds two FedMD-LDP rows with the same scenario and k, one per NFDP row it is calibrated to
    (matched_k): ``pipelib verify`` checks each against the result.json of its own epsilon, not the first
    of that k, and names the row it finds wrong by its calibration."""
    import json

    from pipelib.verify import _consistency

    base = {"scenario": "femnist_iid", "method": "FedMD-LDP", "k": 364, "answer": "softmax", "sampling": None}
    rows = []
    for matched, eps, acc in ((16, 0.0439, 0.8898), (364, 0.9986, 0.8872)):
        run = tmp_path / f"fedmd/femnist_iid/softmax/ldp-with_replacement-k364-at{matched}"
        run.mkdir(parents=True)
        (run / "result.json").write_text(json.dumps(_complete(base | {"epsilon": eps, "accuracy": acc})))
        rows.append(base | {"dataset": "FEMNIST", "epsilon": eps, "accuracy": acc, "seeds": 1, "matched_k": matched})
    pd.DataFrame(rows).to_csv(tmp_path / "table2.csv", index=False)
    assert _consistency(tmp_path) == []
    rows[1]["accuracy"] = 0.8898  # the other row's accuracy
    pd.DataFrame(rows).to_csv(tmp_path / "table2.csv", index=False)
    ((_, why),) = _consistency(tmp_path)
    row = "row FEMNIST FedMD-LDP k=364 (at NFDP k=364's epsilon)"
    assert why == f"{row}: accuracy differs from its result.json (0.8898 vs 0.8872)"


def test_compare_findings_rank_methods_only_where_the_intervals_separate():
    """The compare page's generated sentences: per scenario and budget of epsilon per record, the best method
    against the next (ahead only when the 95 % intervals separate), references and unrankable rows apart."""
    from pipelib.report.pages import compare_findings

    cols = ["scenario", "method", "guarantee_kind", "epsilon", "epsilon_record", "delta_vacuous", "evaluation_only"]
    rows = [
        ["s", "FedMD-NP", "none", math.inf, math.inf, True, False, 0.90, 0.88, 0.92],
        ["s", "DP-SGD", "central", 1.0, 1.0, False, None, 0.80, 0.78, 0.82],
        ["s", "PATE", "central", 8.0, 8.0, False, None, 0.70, 0.68, 0.72],
        ["s", "LDP-DL", "local", 8.0, 96.0, False, None, 0.79, 0.75, 0.83],
        ["s", "FedMD-LDP", "party", 0.05, 0.05, True, True, 0.89, 0.87, 0.91],
        ["s", "FedMD-NFDP", "party", 0.05, 0.05, True, False, 0.50, 0.45, 0.55],
    ]
    t = pd.DataFrame(rows, columns=[*cols, "accuracy", "accuracy_low", "accuracy_high"])
    (line,) = compare_findings(t)
    assert line.startswith("- `s`: no guarantee (reference): best FedMD-NP 0.900 [0.880, 0.920]; ")
    assert "at eps per record <= 1: DP-SGD 0.800 [0.780, 0.820] (central, eps per record 1), the only method" in line
    assert "at eps per record <= 8: DP-SGD 0.800 [0.780, 0.820] (central, eps per record 1), ahead of PATE" in line
    dp = "DP-SGD 0.800 [0.780, 0.820] (central, eps per record 1)"
    assert f"at any epsilon: {dp}, inconclusive against LDP-DL" in line
    assert "not ranked (evaluation-only: its models are not covered): FedMD-LDP, best 0.890" in line
    assert "not ranked (delta >= 1/n): FedMD-NFDP, best 0.500" in line
    from pipelib.report.pages import compare_answer

    header, table = compare_answer(t)  # per kind of guarantee: central and local apart, unrankable rows out
    assert header[-1] == "separated?" and [r[:3] for r in table] == [
        ["s", "<= 1", "central"],
        ["s", "<= 8", "central"],
        ["s", "any", "local"],
    ]
    assert table[1][3:] == ["DP-SGD 0.800 [0.780, 0.820], eps 1", "PATE 0.700 [0.680, 0.720], eps 8", "ahead"]
    assert table[2][4:] == ["", "one method"]
    flagged = t.assign(regime=["", "", "", "owners L 10 (paper 10,000)", "", ""])
    (line,) = compare_findings(flagged)
    assert (
        "inconclusive against LDP-DL 0.790 [0.750, 0.830] (local, eps per record 96, outside its paper's regime)"
        in line
    )
    # compare.csv's record_kind: LDP-DL's epsilon per record holds under replace-one, party-side (not local)
    by_record = t.assign(record_kind=["none", "central", "central", "party", "party", "party"])
    assert [r[2] for r in compare_answer(by_record)[1]] == ["central", "central", "party"]
    assert "(party, eps per record 96)" in compare_findings(by_record)[0]


def test_compare_states_the_adjacency_and_kind_of_the_record_guarantee():
    """Every compare.csv row states what its epsilon per record protects: LDP-DL's (composed over the
    overlapping owners that hold a record) is replace-one and party-side; any other row's is its own."""
    from pipelib.privacy import Adjacency
    from pipelib.report.tables import claims

    t = pd.DataFrame(
        {
            "method": ["LDP-DL", "PATE", "LDP-FL", "FedMD-NFDP"],
            "adjacency": [Adjacency.LOCAL, Adjacency.REPLACE_ONE, Adjacency.LOCAL, Adjacency.REPLACE_ONE],
            "epsilon": [8.0, 8.0, 100.0, 0.05],
            "epsilon_record": [96.0, None, None, None],
        }
    )
    c = claims(t)
    assert list(c["guarantee_kind"]) == ["local", "central", "local", "party"]
    assert list(c["record_kind"]) == ["party", "central", "local", "party"]
    replace = Adjacency.REPLACE_ONE.value
    assert list(c["record_adjacency"]) == [replace, replace, Adjacency.LOCAL.value, replace]
    assert list(c["epsilon_record"]) == [96.0, 8.0, 100.0, 0.05]


def test_audit_findings_say_what_each_row_can_and_cannot_show():
    """The audit's generated sentences: a bound above its claim is named; the validation rows against their
    epsilon; releases without a mechanism; a claim whose delta lets no outcome give a bound, and claims above
    the largest bound the audit could give (every guess right at its guess counts, Bonferroni-corrected: at
    delta 0 and r = m guesses, log(q / (1 - q)) with q = (0.05 / 4)^(1/m))."""
    from pipelib.report.pages import audit_findings, most_auditable

    cols = ["method", "mechanism", "epsilon", "delta", "paper_epsilon", "epsilon_lb", "auc", "exceeds_claim"]
    rows = [
        ["validation: randomized response", "rr-eps1.0", 1.0, 0.0, None, 0.74, 0.73, False],
        ["validation: no mechanism", "none", math.inf, 1.0, None, 4.0, 1.0, False],
        ["FedMD-NP", "np", math.inf, 1.0, None, 2.7, 0.94, False],
        ["FedAvg", "none", math.inf, 1.0, None, 0.0, 0.51, False],
        ["FedMD-NFDP", "nfdp-k300", 0.35, 0.29, None, 0.0, 0.67, False],
        ["LDP-DL", "pm-eps8.0", 8.0, 0.0, None, 0.0, 0.50, False],
        ["reverse k-NN", "laplace-eps0.1", 0.1, 0.0, None, 0.39, 0.63, True],
        ["reverse k-NN", "laplace-eps2.0", 2.0, 0.0, None, 0.39, 0.63, False],
    ]
    fractions = (0.1, 0.2, 0.5, 1.0)
    a = pd.DataFrame(rows, columns=cols).assign(canaries=500, included=250, confidence=0.95)
    text = "\n".join(audit_findings(a, fractions))
    assert "- 1 of 8 rows' lower bounds exceed their claims (a bug or a broken claim): reverse k-NN laplace-eps0.1" in (
        text
    )
    assert "epsilon 1 gives 0.74; every bound at or below its epsilon; the bits in the clear give 4." in text
    assert "the attack finds membership in FedMD-NP np: 2.7 (AUC 0.94); no trace in FedAvg none: 0 (AUC 0.51)" in text
    assert "Not auditable this way: FedMD-NFDP nfdp-k300 claims epsilon 0.35 at delta 0.29" in text
    q = (0.05 / 4) ** (1 / 500)
    assert f"LDP-DL pm-eps8.0: 0 (AUC 0.50), claim 8, at most {math.log(q / (1 - q)):.4g}" in text
    assert (
        "- The other 1 row with a claim the audit could refute: a bound above 0 in 1 (reverse k-NN laplace-eps2.0"
        in (text)
    )
    assert "laplace-eps0.1: 0.39 (AUC 0.63) against 0.1" not in text.split("\n")[-1]  # named above, not as consistent
    assert "No row's lower bound exceeds" in "\n".join(audit_findings(a.assign(exceeds_claim=False), fractions))
    # fewer canaries included leave fewer "in" guesses right: the largest bound falls
    row = a.iloc[5].to_dict()
    assert most_auditable({**row, "included": 100}, fractions) < most_auditable(row, fractions)


# ------------------------------------------------------------------ one style: intervals, colours, flags

CLOSED_FORMS = {"p002_privacy_vs_parties", "p002_privacy_vs_k", "audit"}  # no accuracy plotted


def drawn(name, data, tmp_path, monkeypatch):
    """The figure ``name`` drawn from ``data``, kept open (save is replaced) so its objects can be read."""
    figs = []
    monkeypatch.setattr(F, "save", lambda fig, data, out: figs.append(fig))
    F.plotter(name)(data, outputs(tmp_path, name))
    return figs[0]


def styled(fig, strict: bool = True) -> list[tuple[str, str]]:
    """Check each accuracy series of ``fig``: drawn with its 95 % interval, in its fixed colour; with
    ``strict``, no coloured data line outside such a series (the papers' black markers and the hollow flag
    overlays aside).  Returns the series' (kind, name)."""
    from matplotlib.colors import to_rgba

    from pipelib.report import style

    found = []
    for ax in fig.axes:
        in_series = set()
        for c in ax.containers:
            if not hasattr(c, "series"):
                continue
            data_line, caps, bars = c.lines
            assert c.has_yerr and bars, c.series
            # the fixed colour's hue (a series may be drawn lighter: each party under their mean)
            assert tuple(bars[0].get_color()[0])[:3] == to_rgba(style.color(*c.series))[:3], c.series
            in_series |= {id(x) for x in (data_line, *caps) if x is not None}
            found.append(c.series)
        if not strict:
            continue
        for line in ax.lines:
            if id(line) in in_series or len(line.get_xdata()) == 0:
                continue
            black = to_rgba(line.get_color()) == to_rgba("black")
            overlay = line.get_markerfacecolor() in ("white", "none") or line.get_linestyle() == "None"
            assert black or overlay, f"an accuracy line without its interval: {line.get_label()}"
    return found


def test_a_series_has_its_interval_its_fixed_colour_and_hollow_flagged_points(tmp_path, monkeypatch):
    data = pd.DataFrame(
        {
            "dataset": "MNIST",
            "panel": "clients",
            "x": [20, 100, 20, 100],
            "run": "r",
            "private": [True, True, False, False],
            "accuracy": [0.544, 0.93, 0.96, 0.97],
            "accuracy_low": [0.53, 0.92, 0.95, 0.96],
            "accuracy_high": [0.56, 0.94, 0.97, 0.98],
            "paper_epsilon": 1.0,
            "range": "fixed",
            "peak_accuracy": [0.891, 0.93, 0.96, 0.97],
            "peak_round": 4,
        }
    )
    fig = drawn("p001_clients", data, tmp_path, monkeypatch)
    assert sorted(styled(fig)) == [("method", "FedAvg"), ("method", "LDP-FL")]
    ax = fig.axes[0]
    hollow = [x for x in ax.lines if x.get_markerfacecolor() == "white" and len(x.get_xdata())]
    assert [list(x.get_xdata()) for x in hollow] == [[20.0]]  # the run that diverged, and only it
    assert any("flagged" in t.get_text() for t in ax.get_legend().get_texts())


def test_figure_4_draws_a_flagged_runs_rounds_hollow_as_its_point(tmp_path, monkeypatch):
    """The rounds panel repeats the fraction panel's runs: a run flagged there (diverged) is hollow in every
    round, the others solid in every round, whatever each round's own accuracy."""
    base = {"dataset": "MNIST", "private": True, "paper_epsilon": 1.0, "range": "fixed", "peak_round": 3}
    top = [
        {**base, "panel": "fraction", "x": f, "fraction": f, "run": "r", "accuracy": a, "peak_accuracy": p}
        for f, a, p in [(0.1, 0.10, 0.45), (1.0, 0.95, 0.95)]
    ]
    curve = {0.1: [0.1, 0.45, 0.1], 1.0: [0.1, 0.60, 0.95]}
    bottom = [
        {**base, "panel": "rounds", "x": i, "fraction": f, "run": "r", "accuracy": a, "peak_accuracy": max(curve[f])}
        for f in curve
        for i, a in enumerate(curve[f])
    ]
    data = pd.DataFrame(top + bottom).assign(accuracy_low=lambda t: t.accuracy - 0.01)
    data["accuracy_high"] = data["accuracy"] + 0.01
    fig = drawn("p001_fraction_rounds", data, tmp_path, monkeypatch)
    rounds_ax = next(ax for ax in fig.axes if ax.get_xlabel() == "communication round")
    hollow = [x for x in rounds_ax.lines if x.get_markerfacecolor() == "white" and len(x.get_xdata())]
    assert [list(x.get_xdata()) for x in hollow] == [[0.0, 1.0, 2.0]]  # f_r = 0.1's three rounds, and only them
    assert any("flagged" in t.get_text() for t in rounds_ax.get_legend().get_texts())


def test_compare_figure_draws_evaluation_only_rows_apart_from_their_methods_curve(tmp_path, monkeypatch):
    row = {"mechanism": "x", "delta": 1e-6, "delta_vacuous": False, "guarantee_kind": "party", "claim_kind": "party"}
    row |= {"protected_unit": "record", "accuracy_low": 0.3, "accuracy_high": 0.9}
    data = pd.DataFrame(
        [
            {**row, "method": "FedMD-NFDP", "epsilon": 0.1, "claim_epsilon": 0.1, "accuracy": 0.5},
            {**row, "method": "FedMD-NFDP", "epsilon": 1.0, "claim_epsilon": 1.0, "accuracy": 0.6},
            {**row, "method": "FedMD-LDP", "epsilon": 0.1, "claim_epsilon": 0.1, "accuracy": 0.8},
        ]
    ).assign(evaluation_only=[False, False, True])
    ax = drawn("compare_s", data, tmp_path, monkeypatch).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "FedMD-LDP (evaluation only)" in labels and "FedMD-LDP" not in labels and "FedMD-NFDP" in labels
    dashed = [x for x in ax.lines if x.get_linestyle() == "--" and len(x.get_xdata())]
    assert [list(x.get_ydata()) for x in dashed] == [[0.8]]  # its own line, not joined to NFDP's curve
    assert [t.get_text() for t in ax.texts] == ["eval. only"] and "dashed: evaluation only" in ax.get_title()


def test_figure3_draws_each_party_and_their_mean_with_intervals(tmp_path, monkeypatch):
    from pipelib import stats

    rounds = pd.DataFrame(
        {
            "dataset": "CIFAR-10",
            "method": "FedMD-NFDP",
            "k": 16,
            "round": [0, 1, 0, 1, 0, 1],
            "party": [0, 0, 1, 1, 2, 2],
            "arch": "x",
            "accuracy": [0.40, 0.60, 0.30, 0.55, 0.35, 0.50],
            "test_n": 600,
        }
    )
    data = F.rounds_data(rounds, "FedMD-NFDP", 16)
    assert (data["accuracy_low"] < data["accuracy"]).all() and (data["accuracy"] < data["accuracy_high"]).all()
    assert tuple(data.loc[0, ["accuracy_low", "accuracy_high"]]) == tuple(round(v, 4) for v in stats.wilson(240, 600))
    mean = F.rounds_mean(data)
    assert list(mean["accuracy"].round(4)) == [0.35, 0.55]
    assert tuple(mean.loc[1, ["accuracy_low", "accuracy_high"]]) == stats.mean_accuracy_interval([0.6, 0.55, 0.5], 600)
    gap = F.rounds_mean(data.assign(accuracy=[0.40, float("nan"), 0.30, 0.55, 0.35, 0.50]))  # a party not evaluated
    assert tuple(gap.loc[1, ["accuracy_low", "accuracy_high"]]) == stats.mean_accuracy_interval([0.55, 0.5], 600)
    fig = drawn("p002_rounds", data, tmp_path, monkeypatch)
    assert styled(fig) == [("method", "FedMD-NFDP")] * 4  # three parties and their mean, each with its interval
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["each party", "mean over the parties"]
    old = F.rounds_data(rounds.drop(columns="test_n"), "FedMD-NFDP", 16)  # a rounds table without test counts
    assert "accuracy_low" not in old
    monkeypatch.undo()  # save writes files again
    F.plot_rounds(old, outputs(tmp_path, "old"))
    assert len(written(outputs(tmp_path, "old"))) == 6


@pytest.mark.workflow
def test_every_figure_of_the_tiny_run_draws_intervals_in_fixed_colours(tiny, tmp_path, monkeypatch):
    figures = sorted((tiny / "results/tiny/figures").glob("*.csv"))
    assert len(figures) >= 15
    for path in figures:
        name = path.stem
        assert F.plotter(name) is not None, name
        fig = drawn(name, pd.read_csv(path), tmp_path, monkeypatch)
        accuracies = name not in CLOSED_FORMS  # closed forms: lines alone
        series = styled(fig, strict=accuracies and not name.startswith("compare_"))
        if accuracies:
            assert series, f"{name}: no accuracy series with its interval"
        if name.startswith("compare_"):  # one colour per method, whatever the figure
            assert {kind for kind, _ in series} == {"method"}
        from pipelib.report import style

        assert not style.covered_points(fig), f"{name}: a legend covers data"


def test_the_readme_headline_marks_evaluation_only_rows_and_table2_names_only_a_different_paper_k(tmp_path):
    from pipelib.report.pages import _paper_k, headline_page

    row = {"dataset": "CIFAR-10", "k": 300, "epsilon": 1.0, "delta": 0.6, "accuracy": 0.79}
    row |= {"accuracy_low": 0.76, "accuracy_high": 0.83, "paper_accuracy": None}
    pd.DataFrame(
        [
            {**row, "method": "FedMD-NFDP", "evaluation_only": False},
            {**row, "method": "FedMD-LDP", "evaluation_only": True},
        ]
    ).to_csv(tmp_path / "t2.csv", index=False)
    rknn = {"dataset": "MNIST", "encoder": "hog", "s": 40, "mechanism": "none", "epsilon": math.inf}
    rknn |= {
        "label_accuracy": 0.9,
        "accuracy": 0.9,
        "accuracy_low": 0.89,
        "accuracy_high": 0.91,
        "paper_accuracy": 0.992,
    }
    pd.DataFrame([rknn]).to_csv(tmp_path / "tr.csv", index=False)
    page = headline_page(tmp_path / "t2.csv", tmp_path / "tr.csv", "reduced")
    ldp, nfdp = (next(x for x in page.splitlines() if f"| {m} |" in x) for m in ("FedMD-LDP", "FedMD-NFDP"))
    assert ldp.count("\\*") == 1 and "\\*" not in nfdp
    assert "\\* evaluation-only" in page
    assert _paper_k({"k": 18, "paper_k": 16}) == " (paper k = 16)"
    assert _paper_k({"k": 16, "paper_k": 16}) == "" and _paper_k({"k": 16, "paper_k": float("nan")}) == ""


def test_a_figure_draws_its_tables_utility_floor_hollow_but_not_a_teacher_every_row_shares(tmp_path):
    table = pd.DataFrame(
        {
            "dataset": ["CIFAR-10", "MNIST"],
            "method": ["LDP-DL"] * 2,
            "accuracy": [0.39, 0.96],
            "paper_accuracy": [0.797, 0.988],
            "ceiling_accuracy": [0.428, 0.96],
            "teacher_departure": ["ridge heads (paper: ResNet50)"] * 2,
        }
    )
    table.to_csv(tmp_path / "table_ldpdl.csv", index=False)
    data = pd.DataFrame({"dataset": ["CIFAR-10", "MNIST"], "accuracy": [0.3, 0.9]})
    flagged = F.with_flags("p004_x", data, {"table_ldpdl": tmp_path / "table_ldpdl.csv"})
    assert flagged["flags"].str.contains("substitute").all()  # the claims read both flags
    assert list(F.own_flags(flagged)) == [True, False]  # only the utility floor hollows a point
    assert (
        F.flag_caption(flagged, 200)
        == "\nhollow: utility floor (CIFAR-10): student on true labels 0.428 (paper's best private row 0.797)"
    )
    assert F.with_flags("p004_x", data, None) is data


def test_an_accuracy_axis_spans_at_least_a_quarter():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pipelib.report import style

    fig, ax = plt.subplots()
    ax.set_ylim(0.717, 0.740)
    style.min_span(ax)
    assert ax.get_ylim() == pytest.approx((0.6035, 0.8535))
    ax.set_ylim(0.95, 1.0)
    style.min_span(ax)
    assert ax.get_ylim() == pytest.approx((0.77, 1.02))
    ax.set_ylim(0.1, 0.9)
    style.min_span(ax)
    assert ax.get_ylim() == pytest.approx((0.1, 0.9))
    ax.set_ylim(0.0, 0.05)
    style.min_span(ax)
    assert ax.get_ylim() == pytest.approx((0.0, 0.25))
    for low in [i / 100 for i in range(0, 100)]:  # the widened axis always holds the data (no rounding flip:
        for width in (0.01, 0.1, 0.2):  # the tiny p001_clients once showed 0.77-1.02 for points at 0.1-0.19)
            ax.set_ylim(low, min(low + width, 1.0))
            style.min_span(ax)
            new_low, new_high = ax.get_ylim()
            assert new_low <= low + 1e-12 and new_high >= min(low + width, 1.0) - 1e-12, (low, width)
            assert new_high - new_low == pytest.approx(0.25)
    plt.close(fig)


def test_table2_page_explains_an_infinite_epsilon_at_the_reference_delta():
    from pathlib import Path

    from pipelib.report.pages import table2_page

    golden = Path(__file__).resolve().parent / "golden" / "tiny" / "table2.csv"
    page = table2_page(golden, "cmd")
    assert "inf where no epsilon is proven at that delta" in page
    assert "(paper k = )" not in page


def test_a_flagged_point_needs_a_marker_that_can_be_hollow():
    """An x or a + has no face: drawn 'hollow' it looks like an unflagged point, so style.accuracy refuses it
    (paper 004's PM rows were drawn as x, their utility-floor flag invisible)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pipelib.report import style

    rows = pd.DataFrame({"x": [1.0, 2.0], "accuracy": [0.5, 0.6], "accuracy_low": [0.4, 0.5]})
    rows["accuracy_high"] = [0.6, 0.7]
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="cannot be drawn hollow"):
        style.accuracy(ax, rows, "x", series=("mechanism", "pm"), marker="x", flagged=[True, False])
    style.accuracy(ax, rows, "x", series=("mechanism", "pm"), marker="x", flagged=[False, False])  # nothing hollow
    style.accuracy(ax, rows, "x", series=("mechanism", "pm"), marker="s", flagged=[True, False])
    hollow = [x for x in ax.lines if x.get_markerfacecolor() == "white" and len(x.get_xdata())]
    assert [list(x.get_xdata()) for x in hollow] == [[1.0]]
    plt.close(fig)


def test_a_legend_over_a_point_is_found_and_one_below_the_axes_covers_nothing():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pipelib.report import style

    rows = pd.DataFrame({"x": [1.0, 2.0], "accuracy": [0.9, 0.2], "accuracy_low": [0.85, 0.15]})
    rows["accuracy_high"] = [0.95, 0.25]
    fig, ax = plt.subplots(figsize=(4, 3))
    style.accuracy(ax, rows, "x", series=("method", "LDP-FL"), label="a label long enough to cover a point")
    ax.set_xlim(0.9, 2.1)
    ax.legend(loc="upper left", fontsize=14)
    covered = {(x, round(y, 6)) for _, x, y in style.covered_points(fig)}
    assert covered == {(1.0, 0.85), (1.0, 0.9), (1.0, 0.95)}  # the point and its interval's caps
    style.legend_below(ax)
    assert style.covered_points(fig) == []
    plt.close(fig)


def test_table_ldpdl_averages_an_arms_seeds_and_keeps_wilson_for_a_single_run(tmp_path):
    """paper 004 Table 1 with ldpdl.table.seeds: an arm run on three seeds (its scenario and <scenario>-s1, -s2)
    is one row whose accuracy is the mean of the runs, seeds = 3 and its spread over them, the interval over the
    runs and the test records; an arm of one run keeps its Wilson interval over the test records."""
    import json

    from pipelib import stats
    from pipelib.privacy import NO_PRIVACY
    from pipelib.report import tables

    def run(name, method, acc, record=None, label=True):
        folder = tmp_path / name
        folder.mkdir(parents=True)
        row = {**NO_PRIVACY.row(), "method": method, "accuracy": acc, "label_accuracy": acc - 0.1, "test_n": 1000}
        row.update(epsilon_record=record, max_answers=None if record is None else 3 + record // 1000)
        row.update(label_accuracy=acc - 0.1 if label else None)
        row.update(wall_seconds=10.0, preset="t", seed=0, device="cpu", hardware="CPU: test", scenario=name)
        (folder / "result.json").write_text(json.dumps(_complete(row)))
        return str(folder / "result.json")

    accs = [0.70, 0.80, 0.75]
    entry = {
        "dataset": "Fashion-MNIST",
        "epsilon": 5.0,
        "ldpdl": run("ldpdl_fashion", "LDP-DL", accs[0], 4240),
        "pate": run("pate_fashion", "PATE", 0.78),
        "pate_own": run("pate_own_fashion", "PATE", 0.77),
        "repeats": {
            "ldpdl": [
                run(f"ldpdl_fashion-s{i}", "LDP-DL", a, r) for i, a, r in ((1, accs[1], 4385), (2, accs[2], 4000))
            ],
            "pate_own": [run("pate_own_fashion-s1", "PATE", 0.79, label=False)],
        },
    }
    t = tables.table_ldpdl([entry], tmp_path / "table_ldpdl.csv", 1e-5).set_index("teacher_arm")
    ldpdl, pate, own = t.iloc[0], t.loc["same"], t.loc["own"]
    assert ldpdl["method"] == "LDP-DL" and pate["method"] == own["method"] == "PATE"
    low, high = stats.mean_accuracy_interval(accs, 1000)
    assert ldpdl["seeds"] == 3 and ldpdl["accuracy"] == pytest.approx(0.75) and ldpdl["scenario"] == "ldpdl_fashion"
    assert (ldpdl["accuracy_low"], ldpdl["accuracy_high"]) == pytest.approx((low, high), abs=1e-4)
    assert ldpdl["accuracy_seed_std"] == pytest.approx(0.05) and ldpdl["label_accuracy"] == pytest.approx(0.65)
    assert ldpdl["wall_seconds"] == 30.0 and ldpdl["paper_accuracy"] == 0.834
    assert ldpdl["epsilon_record"] == 4385 and ldpdl["max_answers"] == 7  # the worst run's, not the first's
    assert own["seeds"] == 2 and pd.isna(own["label_accuracy"])  # a run without label accuracy: no mean of it
    assert pate["seeds"] == 1 and pd.isna(pate["accuracy_seed_std"])
    assert pd.read_csv(tmp_path / "table_ldpdl.csv")["seeds"].dropna().tolist() == [3, 1, 2]
    assert (pate["accuracy_low"], pate["accuracy_high"]) == pytest.approx(stats.accuracy_interval(0.78, 1000), abs=1e-4)
