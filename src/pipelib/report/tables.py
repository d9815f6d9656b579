"""Report tables, assembled from stage outputs: each paper table is a view of the methods' result rows.

One row per thing, self-describing columns; every privacy column comes from a guarantee record.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import stats
from ..io import read_csv, read_json, read_table, write_csv, write_table
from ..methods.ldpdl import TABLE_ARMS
from ..privacy import LEDGER_COLUMNS, Adjacency, read_releases, with_reference_delta
from ..privacy.weights import PER_WEIGHT_UNIT
from ..schema import RESULT_COLUMNS, read_result
from . import flags, paper, regime
from .parties import over_seeds, party_interval


def partition_table(summary_paths, out_path) -> pd.DataFrame:
    """One row per (scenario, role, party): records, writers and class counts of every partition."""
    rows = []
    for path in summary_paths:
        s = read_json(path)
        base = {
            "scenario": s["scenario"],
            "public": s["public"],
            "private": s["private"],
            "task": s["task"],
            "scheme": s["scheme"],
            "parties": s["parties"],
            "seed": s["seed"],
        }
        roles = [("test", -1, s["test"])] + [("party", i, p) for i, p in enumerate(s["parties_detail"])]
        for role, party, d in roles:
            rows.append(
                {
                    **base,
                    "role": role,
                    "party": party,
                    "n": d["n"],
                    "writers": d.get("writers"),
                    "class_counts": " ".join(map(str, d["class_counts"])),
                }
            )
    table = pd.DataFrame(rows)
    write_csv(table, out_path)
    return table


def privacy_ledger(release_paths, out_path, preset: str, delta_ref: float) -> pd.DataFrame:
    """Every privatized release of every method, one row each, with its guarantee, also stated at the
    common ``delta_ref``.  ``release_paths``: the release files the privatizing jobs wrote (JSON lists of
    rows) or ledgers collecting them (CSV)."""
    rows = [
        with_reference_delta(r, delta_ref)
        for p in release_paths
        for r in (read_csv(p).to_dict("records") if str(p).endswith(".csv") else read_releases(p))
    ]
    table = pd.DataFrame(rows, columns=list(LEDGER_COLUMNS)) if not rows else pd.DataFrame(rows)
    table = table[[c for c in LEDGER_COLUMNS if c in table] + [c for c in table if c not in LEDGER_COLUMNS]]
    for c in ("party", "releases", "n", "k", "seed"):
        if c in table:
            table[c] = table[c].astype("Int64")
    table["preset"] = preset
    write_csv(table, out_path)
    return table


def result_rows(paths, delta_ref: float) -> pd.DataFrame:
    """Result rows (one JSON object per file) as a frame in schema order, with the epsilon each row's
    guarantee proves at the common ``delta_ref``."""
    rows = [with_reference_delta(read_result(p), delta_ref) for p in paths]
    frame = pd.DataFrame(rows)
    return frame[[c for c in RESULT_COLUMNS if c in frame] + [c for c in frame if c not in RESULT_COLUMNS]]


# Methods whose parties privatize their own answers, each protecting one record of its own data (no
# trusted curator, but record-level neighbours, not a local randomizer's any-two-inputs).
PARTY_SIDE = {"FedMD-NFDP", "FedMD-LDP"}


def guarantee_kind(method: str, adjacency: str) -> str:
    """The kind of a guarantee: ``local`` (each party's randomizer; any two inputs), ``party`` (a party
    privatizes its own release; one record of its data), ``central`` (a trusted curator or the whole
    training run privatizes; one record of the pooled data) or ``none`` (no mechanism)."""

    if adjacency in (Adjacency.LOCAL.value, Adjacency.NONE.value):
        return {Adjacency.LOCAL.value: "local", Adjacency.NONE.value: "none"}[adjacency]
    return "party" if method in PARTY_SIDE else "central"


def claims(table: pd.DataFrame) -> pd.DataFrame:
    """The kind of each row's guarantee, the claim its paper states beside it (LDP-FL's per weight per
    round epsilon, paper 001, not a guarantee for a client's data; else the guarantee itself), and the
    epsilon of one record of the private pool with its adjacency and kind (``record_adjacency``,
    ``record_kind``): where owners overlap (LDP-DL's L<n> owners) a record's epsilon composes the local
    randomizers of every owner that holds it, and holds under replace-one (owners draw records by position in
    a pool whose size the row publishes), a party-side guarantee; elsewhere it is the row's own guarantee."""

    kind = pd.Series([guarantee_kind(m, a) for m, a in zip(table["method"], table["adjacency"])], index=table.index)
    unit = table["paper_protected_unit"] if "paper_protected_unit" in table else pd.Series(None, index=table.index)
    per_weight = unit.eq(PER_WEIGHT_UNIT)
    composed = table["epsilon_record"].notna() if "epsilon_record" in table else pd.Series(False, index=table.index)
    composed &= table["adjacency"].eq(Adjacency.LOCAL.value)
    return pd.DataFrame(
        {
            "guarantee_kind": kind,
            "claim_kind": kind.where(~per_weight, "per-weight-per-round"),
            "claim_epsilon": table["epsilon"].where(~per_weight, table.get("paper_epsilon")),
            "epsilon_record": (
                table["epsilon_record"].fillna(table["epsilon"]) if "epsilon_record" in table else table["epsilon"]
            ),
            "record_adjacency": table["adjacency"].where(~composed, Adjacency.REPLACE_ONE.value),
            "record_kind": kind.where(~composed, "party"),
        },
        index=table.index,
    )


def with_interval(table: pd.DataFrame) -> pd.DataFrame:
    """Result rows with each accuracy's 95 % interval (accuracy_low, accuracy_high): a FedMD row's over its
    parties (its summary: mean, std, count) and test records, any other row's Wilson interval over its test
    records (``test_n``, or LDP-FL's ``test_records``); none where the row does not say how many."""
    n = table["test_n"] if "test_n" in table else pd.Series(float("nan"), index=table.index)
    if "test_records" in table:
        n = n.fillna(table["test_records"])
    bounds = []
    for r, records in zip(table.to_dict("records"), n):
        if pd.isna(records) or pd.isna(r["accuracy"]):
            bounds.append((float("nan"), float("nan")))
        elif str(r["method"]).startswith("FedMD") and not pd.isna(r.get("accuracy_std")):
            bounds.append(stats.summary_accuracy_interval(r["accuracy"], r["accuracy_std"], int(r["parties"]), records))
        else:
            bounds.append(stats.accuracy_interval(r["accuracy"], int(records)))
    return table.assign(accuracy_low=[b[0] for b in bounds], accuracy_high=[b[1] for b in bounds])


def compare(result_paths, out_csv, delta_ref: float) -> pd.DataFrame:
    """results/compare.csv: every result row of every method that was run, in the common schema, then
    the kind of its guarantee and the claim its paper states (:func:`claims`)."""
    table = result_rows(result_paths, delta_ref)
    if "label_accuracy" in table:
        # labels of public samples score a labelling only in the task's own label space: where the public
        # data are another dataset (LDP-DL and PATE on paper 002's splits: MNIST digits for FEMNIST letters)
        # the row's label accuracy compares two label spaces, so it is left out
        other = table["public_dataset"] != table["private_dataset"]
        table.loc[other, "label_accuracy"] = float("nan")
    table = with_interval(table)
    n = len([c for c in RESULT_COLUMNS if c in table])
    extra = claims(table)
    table = table.drop(columns=[c for c in extra if c in table])
    n = len([c for c in RESULT_COLUMNS if c in table])
    table = pd.concat([table.iloc[:, :n], extra, table.iloc[:, n:]], axis=1)
    for c in table:
        if table[c].map(lambda v: isinstance(v, (list, dict))).any():
            table[c] = table[c].map(lambda v: " ".join(map(str, v)) if isinstance(v, list) else v)
    table["regime"] = [regime.of_row(r) for r in table.to_dict("records")]  # each method against its own paper
    write_csv(table, out_csv)
    return table


TABLE2_COLUMNS = [
    "dataset",
    "method",
    "k",
    "n",
    "sampling",
    "epsilon",
    "delta",
    "epsilon_at_delta_ref",
    "delta_ref",
    "epsilon_log10_paper_convention",
    "delta_vacuous",
    "sigma",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "seeds",
    "accuracy_std",
    "accuracy_seed_std",
    "accuracy_any_class",
    "peak_accuracy",
    "peak_round",
    "evaluation_only",
    "paper_k",
    "paper_accuracy",
    "paper_epsilon",
    "paper_delta",
    "preset",
    "seed",
    "scenario",
    "answer",
    "rounds",
    "public_per_round",
    "wall_seconds",
    "matched_k",
    "adjacency",
    "protected_unit",
    "accountant",
    "releases",
    "curve",
    "randomness",
    "sigma_rdp",
    "epsilon_rdp",
    "device",
    "hardware",
    "precision",
    "regime",
    "compute",
    "flags",
]
METHOD_ORDER = {"FedMD-NP": 0, "Centralized": 1, "FedMD-NFDP": 2, "FedMD-LDP": 3}


def _printed(printed) -> dict:
    return {
        "paper_accuracy": round(printed[0] / 100, 4) if printed else None,
        "paper_epsilon": printed[1] if printed else None,
        "paper_delta": printed[2] if printed else None,
    }


def peak_over_seeds(rounds_paths: list) -> dict:
    """A FedMD row's best round: the seeds' mean party accuracy after each round (their rounds tables), its
    maximum and where (a last round far under it is a run that diverged, :mod:`pipelib.report.flags`)."""
    curves = [read_table(p, columns=["round", "accuracy"]).to_pandas().groupby("round")["accuracy"].mean()
              for p in rounds_paths]  # fmt: skip
    curve = pd.concat(curves, axis=1).mean(axis=1)
    return {"peak_accuracy": float(curve.max()), "peak_round": int(curve.idxmax())}


def table2(datasets: dict, runs: dict, centralized: dict, out_csv, out_rounds, delta_ref: float) -> pd.DataFrame:
    """results/table2.csv (one row per dataset, method, k) beside paper 002's printed values, and the
    per-round, per-party accuracies of each row's first run (Figure 3).  Every row also states its epsilon
    at ``delta_ref``, and its accuracy's 95 % interval (:func:`pipelib.stats.repeated_accuracy_interval`).

    ``datasets``: the config's table2 section (+ party_archs); ``runs``: (dataset, run) -> [(result row
    path, rounds table path), ...], one pair per repeat (seed), the first the row's own; ``centralized``:
    (dataset, arch) -> result row path.
    """

    rows, rounds, test_n = [], [], {}
    for (label, _run), paths in runs.items():
        repeats = [with_reference_delta(read_result(result), delta_ref) for result, _ in paths]
        # the row's guarantee holds for every model it averages (a repeat's parties may hold a few records
        # more or fewer); the accuracy is over the seeds
        r = over_seeds(repeats, [result for result, _ in paths])
        test_n[label] = int(r["test_n"])
        paper_k = datasets[label].get("paper_k", {}).get(r["k"], r["k"]) if r["method"] == "FedMD-NFDP" else None
        printed = paper.table2(label, r["method"], paper_k)
        peak = peak_over_seeds([p for _, p in paths])
        rows.append({**r, "dataset": label, "paper_k": paper_k if printed else None, **_printed(printed), **peak})
        first = read_table(paths[0][1]).to_pandas()  # Figure 3: the first run's parties, on its test records
        rounds.append(first.assign(dataset=label, method=r["method"], k=r["k"], test_n=int(repeats[0]["test_n"])))
    # Centralized: each party's architecture trained on the pooled data; averaged like the other rows.
    for label, spec in datasets.items():
        per_arch = {arch: read_result(p) for (lab, arch), p in centralized.items() if lab == label}
        if not per_arch:
            continue
        accs = np.array([per_arch[a]["accuracy"] for a in spec["party_archs"]])
        first = next(iter(per_arch.values()))
        printed = paper.table2(label, "Centralized", None)
        rows.append(
            {
                **{
                    k: first.get(k) if k == "precision" else first[k]  # rows before the precision setting lack it
                    for k in (
                        "epsilon",
                        "delta",
                        "adjacency",
                        "protected_unit",
                        "accountant",
                        "releases",
                        "curve",
                        "delta_vacuous",
                        "preset",
                        "seed",
                        "device",
                        "hardware",
                        "precision",
                    )
                },
                "dataset": label,
                "method": "Centralized",
                "k": first["n"],
                "n": first["n"],
                "sampling": None,
                "sigma": None,
                "evaluation_only": False,
                "seeds": 1,
                "accuracy": float(accs.mean()),
                # Wilson over the test records of the dataset's FedMD rows: the architectures are fixed, not a sample
                **dict(zip(("accuracy_low", "accuracy_high"), stats.accuracy_interval(accs.mean(), test_n[label]))),
                "accuracy_std": float(accs.std()),
                "accuracy_any_class": float(np.mean([per_arch[a]["accuracy_any_class"] for a in spec["party_archs"]])),
                "paper_k": None,
                **_printed(printed),
                "scenario": spec["scenario"],
                "answer": None,
                "rounds": None,
                "public_per_round": None,
                "wall_seconds": float(sum(v["wall_seconds"] for v in per_arch.values())),
            }
        )
    table = pd.DataFrame([with_reference_delta(r, delta_ref) if "delta_ref" not in r else r for r in rows])
    table["regime"] = [regime.fedmd(r, r["dataset"]) for r in table.to_dict("records")]
    table["compute"] = [regime.fedmd_compute(r) for r in table.to_dict("records")]
    table["flags"] = flags.fedmd(table)
    table = table.sort_values(
        ["dataset", "method", "k"], key=lambda c: c.map(METHOD_ORDER) if c.name == "method" else c, kind="stable"
    )
    table = (
        table.assign(_d=table["dataset"].map({d: i for i, d in enumerate(datasets)}))
        .sort_values("_d", kind="stable")
        .drop(columns="_d")
    )
    table = table[[c for c in TABLE2_COLUMNS if c in table]]
    for c in ("k", "n", "seeds", "paper_k", "rounds", "public_per_round", "matched_k", "peak_round"):
        if c in table:  # matched_k: FedMD-LDP rows only
            table[c] = table[c].astype("Int64")
    write_csv(table, out_csv)
    write_table(pa.Table.from_pandas(pd.concat(rounds, ignore_index=True), preserve_index=False), out_rounds)
    return table


FEDMD_BUDGET_COLUMNS = [
    "dataset",
    "method",
    "k",
    "rounds",
    "public_per_round",
    "budget",
    "pretrain_epochs",
    "paper_size",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "accuracy_std",
    "accuracy_seed_std",
    "paper_accuracy",
    "epsilon",
    "delta",
    "epsilon_at_delta_ref",
    "delta_ref",
    "parties",
    "test_n",
    "wall_seconds",
    "preset",
    "seed",
    "device",
    "hardware",
    "precision",
    "scenario",
    "run",
]
# paper 002's FedMD setting (Section 5.1): R = 20 rounds of |X_p| = 5,000 public queries, 20 pre-training epochs
PAPER_BUDGET = (20, 5000, 20)


def table2_view(i, o, a: dict) -> pd.DataFrame:
    """:func:`table2` from its job's named inputs (``i``), outputs (``o``: csv, rounds) and arguments (``a``:
    the rows, the repeats and the centralized baselines, in the order of their inputs)."""
    rows = [tuple(r) for r in a["rows"]]
    runs = {row: [(result, rounds)] for row, result, rounds in zip(rows, i.results, i.rounds)}
    for row, result, rounds in zip([tuple(r) for r in a["repeats"]], i.repeats, i.repeat_rounds):
        runs[row].append((result, rounds))
    centralized = dict(zip([tuple(c) for c in a["centralized"]], i.centralized))
    return table2(a["datasets"], runs, centralized, o.csv, o.rounds, delta_ref=a["delta_ref"])


def fedmd_budget(entries: list[dict], out_csv, delta_ref: float) -> pd.DataFrame:
    """results/fedmd_budget.csv: FedMD-NP and FedMD-NFDP against the distillation budget (rounds x public
    queries per round) and the public pre-training epochs, each accuracy (the mean over parties) with its
    95 % interval over parties and test records (:func:`pipelib.stats.mean_accuracy_interval`) and
    paper 002's Table 2 value of the same row (printed at its own budget: 20 x 5,000, 20 epochs)."""
    rows = []
    for e in entries:
        r = with_reference_delta(read_result(e["path"]), delta_ref)
        low, high = party_interval(e["path"], r["test_n"])
        point = (e["rounds"], e["public_per_round"], e["pretrain_epochs"])
        printed = paper.table2(e["dataset"], r["method"], r.get("k") if r["method"] == "FedMD-NFDP" else None)
        rows.append(
            {
                **r,
                **{k: v for k, v in e.items() if k != "path"},
                "k": r.get("k") if r["method"] == "FedMD-NFDP" else None,
                "budget": e["rounds"] * e["public_per_round"],
                "paper_size": point == PAPER_BUDGET,
                "accuracy_low": low,
                "accuracy_high": high,
                **_printed(printed),
            }
        )
    table = pd.DataFrame(rows, columns=None if rows else FEDMD_BUDGET_COLUMNS)  # no rows: the header alone
    table = table[[c for c in FEDMD_BUDGET_COLUMNS if c in table]]
    for c in ("k", "rounds", "public_per_round", "budget", "pretrain_epochs", "parties", "test_n"):
        table[c] = table[c].astype("Int64")
    write_csv(table, out_csv)
    return table


FEDMD_ABLATION_COLUMNS = [
    "dataset",
    "k",
    "variant",
    "sampling",
    "settings",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "peak_accuracy",
    "peak_round",
    "round0_accuracy",
    "after_peak",
    "after_peak_low",
    "after_peak_high",
    "vs_first",
    "vs_first_low",
    "vs_first_high",
    "reference",
    "paper_k",
    "paper_accuracy",
    "epsilon",
    "delta",
    "rounds",
    "public_per_round",
    "pretrain_epochs",
    "epochs",
    "parties",
    "test_n",
    "wall_seconds",
    "preset",
    "seed",
    "hardware",
    "precision",
    "scenario",
    "run",
]


def _per_round(rounds_path) -> pd.DataFrame:
    """A FedMD run's accuracies: one row per round, one column per party."""
    rounds = read_table(rounds_path, columns=["round", "party", "accuracy"]).to_pandas()
    return rounds.pivot(index="round", columns="party", values="accuracy").sort_index()


def fedmd_ablation(entries: list[dict], out_csv) -> pd.DataFrame:
    """results/fedmd_ablation.csv: FedMD-NFDP at each k under each variant of the loop (``entries`` with a
    ``variant`` and its ``settings``: the fedmd keys it overrides), with the final accuracy's 95 % interval
    over parties and test records, the peak round and round 0 of its per-round means, and the paired
    difference to the ``reference`` variant's row of the same (dataset, k) where it has one (same samples,
    seeds and pre-trained models: Student's t over the parties' differences); and each row's pooled ceilings
    (``pooled`` entries, one per draw: the mean over the parties' architectures, each trained on the union of
    the parties' samples; Wilson's interval over the test records)."""
    rows, first = [], {}
    for e in entries:
        if "pooled" in e:
            continue
        r = read_result(e["path"])
        path = e["path"].replace("result.json", "rounds.parquet")
        per_round = _per_round(path)
        means, parties, peak = per_round.mean(axis=1), per_round.iloc[-1].to_numpy(), per_round.mean(axis=1).idxmax()
        low, high = party_interval(e["path"], r["test_n"])
        key = (e["dataset"], e["k"])
        if e["variant"] == e["reference"]:
            first[key] = parties
        diff = (
            stats.paired_difference_interval(parties, first[key])
            if key in first and first[key] is not parties
            else (None,) * 3
        )
        # the last round against the best: a loss the later rounds caused (these parties, paired)
        drop = stats.paired_difference_interval(parties, per_round.loc[peak].to_numpy())
        rows.append(
            {
                **r,
                "dataset": e["dataset"],
                "k": e["k"],
                "variant": e["variant"],
                "settings": ", ".join(f"{k}={v}" for k, v in e["settings"].items()) or "the preset's loop",
                "accuracy_low": low,
                "accuracy_high": high,
                "peak_accuracy": float(means.max()),
                "peak_round": int(peak),
                "round0_accuracy": float(means.loc[0]),
                "after_peak": drop[0],
                "after_peak_low": drop[1],
                "after_peak_high": drop[2],
                "vs_first": diff[0],
                "vs_first_low": diff[1],
                "vs_first_high": diff[2],
                "pretrain_epochs": e["pretrain_epochs"],
                "reference": e["reference"],
                "paper_k": e["paper_k"],
                **_printed(paper.table2(e["dataset"], "FedMD-NFDP", e["paper_k"])),
            }
        )
    pooled = {}
    for e in (e for e in entries if "pooled" in e):
        key = (e["dataset"], e["k"], e["paper_k"], e.get("sampling", ""), *e["pooled"])
        pooled.setdefault(key, []).append(read_result(e["path"]))
    for (label, k, paper_k, sampling, pe, epochs), results in pooled.items():
        acc, test_n = float(np.mean([r["accuracy"] for r in results])), int(results[0]["test_n"])
        low, high = stats.accuracy_interval(acc, test_n)
        rows.append(
            {
                **{c: results[0][c] for c in ("preset", "seed", "hardware", "precision", "scenario", "test_n")},
                "dataset": label,
                "k": k,
                "variant": "pooled ceiling",
                "sampling": sampling,
                "settings": (
                    f"Centralized on the union of the parties' samples ({sampling}, {len(results)} archs; "
                    f"pre-trained {pe} epochs, then {epochs} on the union)"
                ),
                "accuracy": acc,
                "accuracy_low": low,
                "accuracy_high": high,
                "pretrain_epochs": pe,
                "epochs": epochs,
                "wall_seconds": float(sum(r["wall_seconds"] for r in results)),
                "paper_k": paper_k,
                **_printed(paper.table2(label, "FedMD-NFDP", paper_k)),
            }
        )
    table = pd.DataFrame(rows, columns=None if rows else FEDMD_ABLATION_COLUMNS)
    table = table[[c for c in FEDMD_ABLATION_COLUMNS if c in table]]
    for c in ("k", "peak_round", "rounds", "public_per_round", "pretrain_epochs", "epochs", "parties", "test_n"):
        table[c] = table[c].astype("Int64")
    write_csv(table, out_csv)
    return table


TABLE_RKNN_COLUMNS = [
    "dataset",
    "scenario",
    "encoder",
    "s",
    "k",
    "mechanism",
    "epsilon",
    "delta",
    "epsilon_at_delta_ref",
    "delta_ref",
    "adjacency",
    "cluster_purity",
    "label_accuracy",
    "label_accuracy_low",
    "label_accuracy_high",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "paper_accuracy",
    "paper_label_accuracy",
    "n",
    "accountant",
    "protected_unit",
    "randomness",
    "preset",
    "seed",
    "queries",
    "public_n",
    "test_n",
    "wall_seconds",
    "device",
    "hardware",
    "precision",
    "regime",
    "flags",
]


def table_rknn(labels: list[str], result_paths: list, out_csv, delta_ref: float) -> pd.DataFrame:
    """results/table_rknn.csv: one row per configured reverse k-NN setting, beside paper 003's numbers.
    ``labels[i]`` is the display name (the config row's ``dataset``) of ``result_paths[i]``."""
    out = []
    for label, path in zip(labels, result_paths):
        r = with_reference_delta(read_result(path), delta_ref)
        printed = paper.table_rknn(label, r["s"], r["mechanism"], float(r["epsilon"]))
        out.append(
            {
                **r,
                "dataset": label,
                "paper_accuracy": round(printed[0] / 100, 4) if printed else None,
                "paper_label_accuracy": round(printed[1] / 100, 4) if printed and printed[1] else None,
            }
        )
    # the student's Wilson interval over the test set (the label accuracy is measured on the whole public
    # set: what varies it is the mechanism's draw, which only repeats would show)
    table = stats.with_accuracy_interval(pd.DataFrame(out), "test_n")
    # the label accuracy's Wilson interval over the public records labelled: a verdict against a threshold
    # (0.9702 against 0.97) must not flip with a machine's last bits
    labels = stats.with_accuracy_interval(
        table[["label_accuracy", "public_n"]].rename(columns={"label_accuracy": "accuracy"}), "public_n"
    )
    table["label_accuracy_low"], table["label_accuracy_high"] = labels["accuracy_low"], labels["accuracy_high"]
    table["regime"] = [regime.rknn(r) for r in table.to_dict("records")]
    table["flags"] = flags.rknn(table)
    table = table[[c for c in TABLE_RKNN_COLUMNS if c in table]]
    write_csv(table, out_csv)
    return table


# -------------------------------------------------------------------- paper 002, Tables 3-5

PAPER_TABLE_COLUMNS = [
    "dataset",
    "scenario",
    "parties",
    "setting",
    "answer",
    "sampling",
    "k",
    "n",
    "epsilon",
    "delta",
    "epsilon_at_delta_ref",
    "delta_ref",
    "delta_vacuous",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "seeds",
    "accuracy_std",
    "accuracy_seed_std",
    "accuracy_any_class",
    "peak_accuracy",
    "peak_round",
    "paper_accuracy",
    "preset",
    "seed",
    "rounds",
    "public_per_round",
    "wall_seconds",
    "hardware",
    "precision",
    "regime",
    "compute",
]


def fedmd_view(entries: list[dict], paper_values: dict, key: tuple, out_csv, delta_ref: float) -> pd.DataFrame:
    """A paper table as a view of FedMD result rows: ``entries`` are dicts of the row's own columns
    (dataset, setting, ...), ``path``, its result row, and ``repeats``, the result rows of its other seeds
    (averaged in, :func:`pipelib.report.parties.over_seeds`); ``paper_values`` maps the values of ``key`` (a
    tuple of column names) to the paper's printed accuracy (%)."""
    rows = []
    for e in entries:
        paths = [e["path"], *e.get("repeats", [])]
        r = over_seeds([with_reference_delta(read_result(p), delta_ref) for p in paths], paths)
        row = {**r, **{k: v for k, v in e.items() if k not in ("path", "repeats")}}
        printed = paper_values.get(tuple(row[c] for c in key))
        row["regime"], row["compute"] = regime.fedmd(row, row["dataset"]), regime.fedmd_compute(row)
        row |= peak_over_seeds([str(p).replace("result.json", "rounds.parquet") for p in paths])
        rows.append({**row, "paper_accuracy": round(printed / 100, 4) if printed is not None else None})
    table = pd.DataFrame(rows, columns=None if rows else PAPER_TABLE_COLUMNS)  # no rows: the header alone
    table = table[[c for c in PAPER_TABLE_COLUMNS if c in table]]
    write_csv(table, out_csv)
    return table


def table3(entries, out_csv, delta_ref):
    """results/table3.csv: answer types (logits / softmax / argmax) x number of parties N."""
    return fedmd_view(entries, paper.TABLE3, ("dataset", "parties", "answer"), out_csv, delta_ref)


def table4(entries, out_csv, delta_ref):
    """results/table4.csv: IID against non-IID partitions."""
    return fedmd_view(entries, paper.TABLE4, ("dataset", "setting"), out_csv, delta_ref)


def table5(entries, out_csv, delta_ref):
    """results/table5.csv: sampling with against without replacement."""
    return fedmd_view(entries, paper.TABLE5, ("dataset", "k", "sampling"), out_csv, delta_ref)


# -------------------------------------------------------------------- paper 004, Table 1

TABLE_LDPDL_COLUMNS = [
    "dataset",
    "method",
    "run",
    "mechanism",
    "epsilon",
    "delta",
    "epsilon_at_delta_ref",
    "delta_ref",
    "adjacency",
    "protected_unit",
    "epsilon_owner",
    "epsilon_teacher_data",
    "epsilon_record",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "seeds",
    "accuracy_seed_std",
    "test_n",
    "label_accuracy",
    "paper_accuracy",
    "ceiling_accuracy",
    "ceiling_accuracy_low",
    "ceiling_accuracy_high",
    "teacher_arm",
    "teacher_model",
    "paper_teacher_model",
    "teacher_departure",
    "owner_design",
    "owners",
    "per_query",
    "queries",
    "aqs",
    "per_answer_epsilon",
    "per_answer_epsilon_max",
    "max_answers",
    "answer_cap",
    "mean_answers_paper",
    "sigma",
    "n",
    "accountant",
    "curve",
    "randomness",
    "scenario",
    "preset",
    "seed",
    "wall_seconds",
    "hardware",
    "precision",
    "regime",
]


def table_ldpdl(entries: list[dict], out_csv, delta_ref: float) -> pd.DataFrame:
    """results/table_ldpdl.csv: paper 004 Table 1.  LDP-DL and PATE rows from our result rows (``entries``:
    dataset, epsilon, the result path of each arm of :data:`pipelib.methods.ldpdl.TABLE_ARMS` and each arm's
    teacher model),
    DP-SGD and DP-FL as the paper prints them (``run`` = quoted: not run here, no guarantee of ours).
    ``teacher_departure``: the row's teachers where they stand in for the paper's ('' where they do not);
    ``ceiling_accuracy`` (and its interval): the dataset's student on true labels (an entry's ``ceiling``, rule
    ldpdl_ceiling), the noise-free reference of every row of the dataset."""
    rows = []
    for e in entries:
        ceiling = {}
        if "ceiling" in e:
            c = stats.with_accuracy_interval(pd.DataFrame([read_result(e["ceiling"])]), "test_n", digits=4).iloc[0]
            ceiling = {f"ceiling_{k}": c[k] for k in ("accuracy", "accuracy_low", "accuracy_high")}
        for arm in (a for a in TABLE_ARMS if a in e):
            runs = [
                with_reference_delta(read_result(p), delta_ref) for p in (e[arm], *e.get("repeats", {}).get(arm, []))
            ]
            r = _over_ldpdl_runs(runs)
            printed = paper.TABLE_LDPDL.get((r["method"], e["dataset"], e["epsilon"]))
            ours, theirs = e.get("teachers", {}).get(arm), paper.TEACHERS_LDPDL[r["method"]]
            rows.append(
                {
                    **r,
                    "dataset": e["dataset"],
                    "run": "run",
                    "paper_accuracy": _fraction(printed),
                    "teacher_arm": TABLE_ARMS[arm],
                    "teacher_model": ours,
                    "paper_teacher_model": theirs,
                    # PATE's own arm trains its teachers as PATE does (a smaller CNN is compute, not a substitute);
                    "teacher_departure": (
                        "teachers not recorded"
                        if ours is None
                        else ""
                        if arm == "pate_own"
                        else f"{ours} (paper: {theirs})"
                    ),
                    **ceiling,
                }
            )
    for (method, dataset, eps), acc in paper.TABLE_LDPDL.items():
        if method in ("DP-SGD", "DP-FL") and (dataset, eps) in {(e["dataset"], e["epsilon"]) for e in entries}:
            rows.append(
                {
                    "dataset": dataset,
                    "method": method,
                    "run": "quoted",
                    "epsilon": eps,
                    "paper_accuracy": _fraction(acc),
                }
            )
    table = pd.DataFrame(rows, columns=None if rows else TABLE_LDPDL_COLUMNS)
    if rows:  # one run: Wilson over the test records (the quoted rows have none); repeats: their own interval
        wilson = stats.with_accuracy_interval(table, "test_n", digits=4)
        one = table["seeds"].fillna(1).le(1) if "seeds" in table else pd.Series(True, index=table.index)
        for c in ("accuracy_low", "accuracy_high"):
            table[c] = wilson[c].where(one, table[c] if c in table else math.nan)
    if "seeds" in table:
        table["seeds"] = table["seeds"].astype("Int64")  # the quoted rows: none
    table["regime"] = [regime.ldpdl(r) for r in table.to_dict("records")]
    table = table[[c for c in TABLE_LDPDL_COLUMNS if c in table]]
    write_csv(table, out_csv)
    return table


# A Table 1 row's columns that differ between its seeds' runs and are stated for the worst of them: the
# guarantees and the busiest owner's answers (the largest), the busiest owner's per-answer epsilon (the smallest)
WORST_OVER_RUNS = {
    max: ("epsilon", "delta", "epsilon_at_delta_ref", "epsilon_owner", "epsilon_teacher_data", "epsilon_record",
          "per_answer_epsilon_max", "max_answers"),
    min: ("per_answer_epsilon",),
}  # fmt: skip


def _over_ldpdl_runs(runs: list[dict]) -> dict:
    """A Table 1 row over its runs (the first the row's own, the others its repeats on other seeds): the first
    run's columns (its scenario and seed among them) with the mean accuracy, the mean label accuracy (where
    every run has one), the number of runs and, for two or more, the runs' spread and the 95 % interval over
    the runs and the test records (:func:`pipelib.stats.repeated_accuracy_interval`), each guarantee at its
    largest over the runs (it holds for every student the row averages, :data:`WORST_OVER_RUNS`) and the runs'
    summed wall time."""
    if len(runs) == 1:
        return {**runs[0], "seeds": 1}
    accs = [float(r["accuracy"]) for r in runs]
    low, high = stats.repeated_accuracy_interval([[a] for a in accs], int(runs[0]["test_n"]))
    labels = [float(r["label_accuracy"]) for r in runs if pd.notna(r.get("label_accuracy"))]
    worst = {}
    for pick, keys in WORST_OVER_RUNS.items():
        for k in keys:
            values = [float(r[k]) for r in runs if pd.notna(r.get(k))]
            if values:
                worst[k] = pick(values)
    return {
        **runs[0],
        **worst,
        "seeds": len(runs),
        "accuracy": float(np.mean(accs)),
        "accuracy_low": round(low, 4),
        "accuracy_high": round(high, 4),
        "accuracy_seed_std": float(np.std(accs, ddof=1)),
        "label_accuracy": float(np.mean(labels)) if len(labels) == len(runs) else math.nan,
        "wall_seconds": float(sum(r["wall_seconds"] for r in runs)),
    }


def _fraction(percent):
    return round(percent / 100, 4) if percent is not None else None


TABLE_LDPFL_COLUMNS = [
    "dataset",
    "method",
    "range",
    "mechanism",
    "epsilon",
    "delta",
    "adjacency",
    "protected_unit",
    "accountant",
    "paper_epsilon",
    "paper_protected_unit",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "test_records",
    "paper_accuracy",
    "difference",
    "peak_accuracy",
    "peak_round",
    "init",
    "init_in_box",
    "clients",
    "clients_per_round",
    "rounds",
    "weights",
    "arch",
    "n",
    "lr",
    "batch",
    "local_epochs",
    "scenario",
    "run",
    "fraction",
    "preset",
    "seed",
    "wall_seconds",
    "hardware",
    "precision",
    "regime",
    "flags",
]


def table_ldpfl(entries: list[dict], out_csv) -> pd.DataFrame:
    """results/table_ldpfl.csv: paper 001 Table 1 (fixed vs adaptive range at each epsilon) and the noise-free
    federated-averaging row per dataset, beside the paper's values (the noise-free one as implied by its
    introduction).  ``epsilon`` is a client's composed guarantee; ``paper_epsilon`` the paper's per-weight,
    per-round claim.  The noise-free run clipped to the fixed box (range ``fixed box, no coins``) splits a
    fixed-range row's loss into what the box costs and what the coins cost (issue 51)."""
    rows = []
    for e in entries:
        r = read_result(e["path"])
        if e["range"] == "box":
            e = {**e, "range": flags.BOX}
        if e["range"] == "none":
            printed = paper.NOISE_FREE_LDPFL.get(e["dataset"])
        else:
            printed = paper.TABLE_LDPFL.get((e["dataset"], e["epsilon"], e["range"]))
        best, at = flags.peak(read_table(e["path"].replace("result.json", "rounds.parquet")).to_pandas())
        rows.append(
            {
                **r,
                "dataset": e["dataset"],
                "range": e["range"],
                "paper_accuracy": _fraction(printed),
                "peak_accuracy": best,
                "peak_round": at,
            }
        )
    table = pd.DataFrame(rows, columns=None if rows else TABLE_LDPFL_COLUMNS)
    if rows:
        table = stats.with_accuracy_interval(table, "test_records", digits=4)
        table["difference"] = table["accuracy"] - table["paper_accuracy"]
        table["regime"] = [regime.ldpfl(r) for r in table.to_dict("records")]
        table["flags"] = flags.ldpfl(table)
    table = table[[c for c in TABLE_LDPFL_COLUMNS if c in table]]
    write_csv(table, out_csv)
    return table
