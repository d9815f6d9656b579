"""Where a result row's setting departs from its paper's in a way that moves the privacy/utility trade-off.

A *regime* departure changes what a method's accuracy at its guarantee means: the parties' or owners' data
(how many, how much each holds), the answers each releases (FedMD-LDP's distillation budget: its noise is set
by the number of answers).  A *compute* departure (model size, epochs, width, sweep density, the distillation
budget where the public queries cost no privacy: FedMD-NP, FedMD-NFDP) does not.  Each table's ``regime``
column lists its row's departures ('' when none); a claim resting on a flagged row is untested
(:mod:`pipelib.report.claims`); FedMD's tables also list their rows' distillation budget in ``compute``.
The paper's settings are the papers' (SPECS.md), transcribed in :mod:`pipelib.report.paper`.
"""

from __future__ import annotations

import pandas as pd

from . import paper

# Paper 002 (Section 5.1; SPECS.md 1.1): per-party records n / N with N = 10, R = 20 rounds of |X_p| = 5,000.
FEDMD_SETTING = {"FEMNIST": {"party_n": 2880}, "CIFAR-10": {"party_n": 300}}
FEDMD_BUDGET = (20, 5000)
# Paper 004 (Section 5; SPECS.md 4.1): L = 10,000 owners of 4,000 records, S = 200 queries x 5 AQS iterations.
LDPDL_SETTING = {"owners": 10000, "queries": 1000}
SIZE_TOLERANCE = 0.1  # a party size within 10 % of the paper's is the paper's (dealing leaves remainders)


def _number(n: float) -> str:
    return f"{int(n):,}"


def fedmd_budget(row: dict) -> str:
    """A FedMD row's distillation budget where it differs from the paper's ('' where it does not)."""
    rounds, queries = row.get("rounds"), row.get("public_per_round")
    if pd.isna(rounds) or pd.isna(queries) or (int(rounds), int(queries)) == FEDMD_BUDGET:
        return ""
    paper_budget = f"paper {FEDMD_BUDGET[0]} x {_number(FEDMD_BUDGET[1])}"
    return f"distillation budget {int(rounds)} x {_number(queries)} public queries ({paper_budget})"


def fedmd_compute(row: dict) -> str:
    """A FedMD row's compute departure: its distillation budget where the public queries cost no privacy
    (FedMD-NP, FedMD-NFDP: the sample is the release, answers are post-processing; Centralized has none)."""
    return "" if row.get("method") == "FedMD-LDP" else fedmd_budget(row)


def fedmd(row: dict, dataset: str) -> str:
    """A FedMD row's regime departures: its parties' size (the NFDP rows' k is a share of it) and, for
    FedMD-LDP only, its distillation budget (the number of answers sets its noise; for the other rows the
    budget is compute, :func:`fedmd_compute`); the number of parties is a table's own variable (Table 3,
    Figure 2(d)) and not flagged."""
    out = [fedmd_budget(row)] if row.get("method") == "FedMD-LDP" and fedmd_budget(row) else []
    setting, n = FEDMD_SETTING.get(dataset), row.get("n")
    if setting and row.get("method") == "Centralized":  # the pooled records of the paper's N = 10 parties
        setting = {"party_n": 10 * setting["party_n"]}
    if setting and not pd.isna(n) and abs(n - setting["party_n"]) > SIZE_TOLERANCE * setting["party_n"]:
        what = "pooled records" if row.get("method") == "Centralized" else "party size n ="
        out.append(f"{what} {_number(n)} (paper {_number(setting['party_n'])})")
    return "; ".join(out)


def ldpfl(row: dict) -> str:
    """An LDP-FL row's departures from paper 001's clients, their records and rounds."""
    setting = paper.LDPFL_SETTING.get(row["dataset"])
    if setting is None:
        return ""
    ours = {"clients": row["clients"], "records per client": row["n"], "rounds": row["rounds"]}
    theirs = {"clients": setting["clients"], "records per client": setting["records"], "rounds": setting["rounds"]}
    return "; ".join(
        f"{what} {_number(ours[what])} (paper {_number(theirs[what])})"
        for what in ours
        if not pd.isna(ours[what]) and int(ours[what]) != int(theirs[what])
    )


def ldpdl(row: dict) -> str:
    """An LDP-DL row's departures from paper 004's owners and queries (PATE and the quoted rows: none)."""
    if row.get("method") != "LDP-DL":
        return ""
    out = []
    for what, key in (("owners L", "owners"), ("queries", "queries")):
        value = row.get(key)
        if value is not None and not pd.isna(value) and int(value) != LDPDL_SETTING[key]:
            out.append(f"{what} {_number(value)} (paper {_number(LDPDL_SETTING[key])})")
    return "; ".join(out)


# Paper 003 (Section 3.1; SPECS.md 3.1): the private records the votes come from and the public pool clustered.
# CIFAR-10's private "other 29,000" are 20,000 train + 9,000 test images; offline we have 20,000 (docs/data.md).
RKNN_SETTING = {"MNIST": {"n": 60000, "public_n": 5000}, "CIFAR-10": {"n": 29000, "public_n": 30000}}


def rknn(row: dict) -> str:
    """A reverse k-NN row's departures from paper 003's private records (the votes per query, against which
    the noise is set) and public pool (what is clustered and labelled); a comparison row on another dataset
    (FedMD-NFDP's splits) is outside the paper's setting altogether."""
    setting = RKNN_SETTING.get(row["dataset"])
    if setting is None:
        return f"{row['dataset']} is not a dataset of paper 003"
    names = {"n": "private records", "public_n": "public records"}
    return "; ".join(
        f"{names[key]} {_number(row[key])} (paper {_number(paper_value)})"
        for key, paper_value in setting.items()
        if not pd.isna(row.get(key)) and abs(row[key] - paper_value) > SIZE_TOLERANCE * paper_value
    )


# The papers' datasets, by the (public, private) data a compare.csv row names: FedMD's are pairs (public data,
# private task), the others' their private dataset; a row on any other data is outside its paper's setting.
FEDMD_DATASETS = {("mnist", "femnist_letters"): "FEMNIST", ("cifar10", "cifar100"): "CIFAR-10"}
IMAGE_DATASETS = {"mnist": "MNIST", "fashion_mnist": "Fashion-MNIST", "cifar10": "CIFAR-10"}  # papers 001, 004
PAPER_DATASETS = {
    "reverse k-NN": ("003", {"mnist": "MNIST", "cifar10": "CIFAR-10"}),
    "LDP-DL": ("004", IMAGE_DATASETS),
    "LDP-FL": ("001", IMAGE_DATASETS),
    "FedAvg": ("001", IMAGE_DATASETS),
}
CHECKS = {"reverse k-NN": rknn, "LDP-DL": ldpdl, "LDP-FL": ldpfl, "FedAvg": ldpfl}


def of_row(row: dict) -> str:
    """A compare.csv row's departures from its own paper's setting: FedMD's budget and party size, reverse
    k-NN's records, LDP-DL's owners and queries, LDP-FL's clients, records and rounds; a dataset its paper does
    not use is a departure of its own.  DP-SGD, PATE and Centralized without a paper setting of their own
    here: ''."""
    method = row["method"]
    if str(method).startswith("FedMD"):
        return fedmd(row, FEDMD_DATASETS.get((row.get("public_dataset"), row.get("private_dataset")), ""))
    if method not in CHECKS:
        return ""
    number, labels = PAPER_DATASETS[method]
    label = labels.get(row.get("private_dataset"))
    if label is None:
        return f"{row.get('private_dataset')} is not a dataset of paper {number}"
    return CHECKS[method]({**row, "dataset": label})


# A figure's rows share their table's setting except the swept variable: they carry the regime of the table
# rows of the same dataset (figure-name prefix -> table, and the rows of it that the figure varies).
FIGURE_TABLES = {
    "p001_": ("table_ldpfl", {"method": "LDP-FL"}),
    "p002_accuracy_vs_parties": ("table2", {"method": "FedMD-NFDP"}),
    "p002_rounds": ("table2", {"method": "FedMD-NFDP"}),
    "p003_": ("table_rknn", {}),
    "p004_": ("table_ldpdl", {"method": "LDP-DL"}),
}


def flagged(value) -> bool:
    """Whether a ``regime`` cell names a departure ('' and a missing value read back from CSV do not)."""
    return str(value or "") not in ("", "nan")


def figure_table(name: str) -> tuple[str, dict] | None:
    """The table whose rows give figure ``name``'s regime, and the filter choosing them; None for a figure
    with no table (the closed forms)."""
    return next((entry for prefix, entry in FIGURE_TABLES.items() if name.startswith(prefix)), None)


def by_dataset(name: str, tables: dict) -> dict | None:
    """The regime of figure ``name``'s rows per dataset: the departures of its table's rows of that dataset
    (``tables``: table name -> frame with a regime column); None for a figure with no table (the closed forms)
    or when the table is not in ``tables`` or has no regime column."""
    entry = figure_table(name)
    t = tables.get(entry[0]) if entry else None
    if t is None or "regime" not in t:
        return None
    for column, value in entry[1].items():
        t = t[t[column] == value]
    return {
        dataset: "; ".join(sorted({str(f) for f in g["regime"].fillna("") if str(f)}))
        for dataset, g in t.groupby("dataset")
    }


def of_figure(name: str, data: pd.DataFrame, tables: dict) -> pd.Series | None:
    """The ``regime`` of a figure's rows (``tables``: table name -> frame with a regime column), or None for a
    figure with no table (the closed forms).  A dataset whose table rows this run lacks is flagged as unknown:
    a claim on it stays untested."""
    entry = figure_table(name)
    if entry is None:
        return None
    unknown = f"regime unknown: no {entry[0]} row of this dataset in this run"
    flags = by_dataset(name, tables)
    if flags is None:
        return pd.Series(unknown, index=data.index)
    return data["dataset"].map(flags).fillna(unknown)
