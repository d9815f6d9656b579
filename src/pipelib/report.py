"""Report tables assembled from stage outputs (CSV, one row per thing, self-describing columns)."""

from __future__ import annotations

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
