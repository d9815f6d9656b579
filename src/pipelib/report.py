"""Report tables assembled from stage outputs (CSV, one row per thing, self-describing columns)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .io import read_json, write_csv


def partition_table(summary_paths, out_path) -> pd.DataFrame:
    """One row per (scenario, role, party): records, writers and class counts of every partition."""
    rows = []
    for path in summary_paths:
        s = read_json(path)
        base = {"scenario": s["scenario"], "public": s["public"], "private": s["private"], "task": s["task"],
                "scheme": s["scheme"], "parties": s["parties"], "seed": s["seed"]}
        roles = [("test", -1, s["test"])] + [("party", i, p) for i, p in enumerate(s["parties_detail"])]
        for role, party, d in roles:
            rows.append({**base, "role": role, "party": party, "n": d["n"], "writers": d.get("writers"),
                         "class_counts": " ".join(map(str, d["class_counts"]))})
    table = pd.DataFrame(rows)
    write_csv(table, out_path)
    return table


def privacy_ledger(ledger_paths, out_path, preset: str) -> pd.DataFrame:
    """All NFDP ledgers of the config in one table (one row per scenario, sampling, k, party)."""
    frames = [pd.read_csv(p) for p in ledger_paths]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    table["preset"] = preset
    write_csv(table, out_path)
    return table


TABLE2_COLUMNS = ["dataset", "method", "k", "n", "sampling", "epsilon", "delta", "epsilon_log10", "delta_vacuous",
                  "sigma", "accuracy", "accuracy_std", "accuracy_any_class", "paper_k", "paper_accuracy", "paper_epsilon", "paper_delta",
                  "preset", "seed", "scenario", "answer", "rounds", "public_per_round", "wall_seconds"]

METHOD_NAMES = {"np": "FedMD-NP", "nfdp": "FedMD-NFDP", "ldp": "FedMD-LDP"}


def table2(datasets: dict, results: dict, centralized: dict, preset: str, seed: int, out_csv, out_rounds,
           rounds_paths: dict) -> pd.DataFrame:
    """Assemble results/table2.csv (one row per dataset, method, k) and the per-round accuracies.

    ``datasets``: the config's table2 section; ``results``: (dataset, method dir) -> result JSON path;
    ``centralized``: (dataset, arch) -> result JSON path; ``rounds_paths``: like ``results``, rounds tables.
    """
    import math

    import pyarrow as pa
    import pyarrow.parquet as pq

    from . import paper
    from .io import write_table

    rows, rounds = [], []
    for (label, method_dir), path in results.items():
        r = read_json(path)
        kind = method_dir.split("-")[0]
        method = METHOD_NAMES[kind]
        paper_k = datasets[label].get("paper_k", {}).get(r["k"], r["k"]) if kind == "nfdp" else None
        printed = paper.table2(label, method, paper_k)
        rows.append({"dataset": label, "method": method, "k": r["k"], "n": r["n"], "sampling": r["sampling"],
                     "epsilon": r["epsilon"], "delta": r["delta"], "epsilon_log10": r["epsilon_log10"],
                     "delta_vacuous": r["delta_vacuous"], "sigma": r["sigma"], "accuracy": r["accuracy"],
                     "accuracy_std": r["accuracy_std"], "accuracy_any_class": r["accuracy_any_class"],
                     "paper_k": paper_k if printed else None,
                     "paper_accuracy": round(printed[0] / 100, 4) if printed else None,
                     "paper_epsilon": printed[1] if printed else None, "paper_delta": printed[2] if printed else None,
                     "preset": preset, "seed": seed, "scenario": r["scenario"], "answer": r["answer"],
                     "rounds": r["rounds"], "public_per_round": r["public_per_round"],
                     "wall_seconds": r["wall_seconds"], "matched_k": r.get("matched_k")})
        rounds.append(pq.read_table(rounds_paths[(label, method_dir)]).to_pandas().assign(
            dataset=label, method=method, k=r["k"]))
    # Centralized: each party's architecture trained on the pooled data; averaged like the other rows.
    for label, spec in datasets.items():
        per_arch = {arch: read_json(p) for (lab, arch), p in centralized.items() if lab == label}
        if not per_arch:
            continue
        accs = np.array([per_arch[a]["accuracy"] for a in spec["party_archs"]])
        pooled = next(iter(per_arch.values()))["n_pooled"]
        printed = paper.table2(label, "Centralized", None)
        rows.append({"dataset": label, "method": "Centralized", "k": pooled, "n": pooled, "sampling": None,
                     "epsilon": math.inf, "delta": 1.0, "epsilon_log10": math.inf, "delta_vacuous": True,
                     "sigma": None, "accuracy": float(accs.mean()), "accuracy_std": float(accs.std()),
                     "accuracy_any_class": float(np.mean([per_arch[a]["accuracy_any_class"] for a in spec["party_archs"]])),
                     "paper_k": None, "paper_accuracy": round(printed[0] / 100, 4) if printed else None,
                     "paper_epsilon": printed[1] if printed else None, "paper_delta": printed[2] if printed else None,
                     "preset": preset, "seed": seed, "scenario": spec["scenario"], "answer": None, "rounds": None,
                     "public_per_round": None,
                     "wall_seconds": float(sum(v["wall_seconds"] for v in per_arch.values()))})
    order = {"FedMD-NP": 0, "Centralized": 1, "FedMD-NFDP": 2, "FedMD-LDP": 3}
    table = pd.DataFrame(rows)
    table = table.sort_values(["dataset", "method", "k"], key=lambda c: c.map(order) if c.name == "method" else c,
                              kind="stable")
    table = table.assign(_d=table["dataset"].map({d: i for i, d in enumerate(datasets)})).sort_values(
        "_d", kind="stable").drop(columns="_d")
    table = table[[c for c in TABLE2_COLUMNS + ["matched_k"] if c in table]]
    for c in ("k", "n", "paper_k", "rounds", "public_per_round", "matched_k"):
        table[c] = table[c].astype("Int64")
    write_csv(table, out_csv)
    write_table(pa.Table.from_pandas(pd.concat(rounds, ignore_index=True), preserve_index=False), out_rounds)
    return table


RKNN_COLUMNS = ["dataset", "scenario", "encoder", "s", "k", "mechanism", "epsilon", "delta", "adjacency",
                "label_accuracy", "test_accuracy", "paper_test_accuracy", "paper_label_accuracy", "preset", "seed"]


def table_rknn(rows: list[dict], student_paths: list, preset: str, seeds: list, out_csv) -> pd.DataFrame:
    """results/table_rknn.csv: one row per configured reverse k-NN setting, beside the paper's numbers."""
    import math

    from . import paper

    out = []
    for row, path, seed in zip(rows, student_paths, seeds):
        r = read_json(path)
        eps = float(row.get("epsilon", math.inf))
        printed = paper.table_rknn(row["dataset"], row["s"], row["mechanism"], eps)
        out.append({"dataset": row["dataset"], "scenario": row["scenario"], "encoder": row["encoder"], "s": row["s"],
                    "k": row["k"], "mechanism": row["mechanism"], "epsilon": eps,
                    "delta": 0.0 if row["mechanism"] != "none" else 1.0,
                    "adjacency": {"none": None, "laplace": "replace-one record (sensitivity 2k)",
                                  "rr": "local: any two records", "collision": "local: any two records"}[row["mechanism"]],
                    "label_accuracy": r["label_accuracy"], "test_accuracy": r["test_accuracy"],
                    "paper_test_accuracy": round(printed[0] / 100, 4) if printed else None,
                    "paper_label_accuracy": round(printed[1] / 100, 4) if printed and printed[1] else None,
                    "preset": preset, "seed": seed, "queries": r["queries"], "public_n": r["public_n"],
                    "test_n": r["test_n"]})
    table = pd.DataFrame(out)
    write_csv(table, out_csv)
    return table
