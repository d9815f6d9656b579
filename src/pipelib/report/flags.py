"""Row flags: where a result row's number is set by our own setup rather than by the method it reports.

Beside a row's regime departures (:mod:`pipelib.report.regime`: the paper's parties, owners, answers), four
flags, each computed from the results, never typed:

- ``utility floor``: the row's own non-private reference (noise-free FedAvg for LDP-FL, FedMD-NP for FedMD,
  reverse k-NN's student on noise-free labels of the same encoder, LDP-DL's and PATE's student on the true
  labels of its public queries) sits more than ``FLOOR_MARGIN`` under the paper's value of that reference
  (paper 004 prints none: its LDP-DL accuracy, which a noise-free student must at least reach): our model,
  encoder or data cannot reach the paper's utility before any noise, so a private row's shortfall says
  nothing about the mechanism;
- ``diverged``: the row's run fell more than ``DIVERGE_DROP`` from its best round by its last (LDP-FL's
  per-round accuracy; FedMD's mean over parties and seeds): a training failure, not a converged accuracy;
- ``at ceiling``: a private row equal to its non-private reference within its 95 % interval (reverse k-NN's
  student on noise-free labels; a fixed-range LDP-FL row's noise-free run clipped to the same box, where that
  box costs more than the intervals against unclipped averaging): the mechanism cost nothing and the stand-in
  (encoder, student; the box against our model) set the value;
- ``substitute``: a teacher or model that is not the paper's (LDP-DL's teachers, ``teacher_departure``), or
  a fixed weight box that holds under ``IN_BOX_MIN`` of the run's initial values (our initialisation, not the
  paper's, decides what the box clips).

Each flag is a text starting with its name ('diverged: peak 0.891 at round 4, final 0.544'); a row's
``flags`` are '; '-joined.  A claim resting on a flagged row is untested with the flag named, unless the
claim accepts that flag (:mod:`pipelib.report.claims`).  A figure's rows carry the dataset-level flags of
their table (a utility floor, a substitute teacher), their own (a run that diverged), and, for a fixed-box
LDP-FL point of Table 1's setting at any epsilon, ``at ceiling`` against Table 1's clipped run of that box.
"""

from __future__ import annotations

import math

import pandas as pd

from ..runs import LDPFL_RUN, LdpflRun
from . import paper

NAMES = ("utility floor", "diverged", "at ceiling", "substitute")
FLOOR_MARGIN = 0.10  # a non-private reference this far under the paper's cannot carry the paper's trade-off
DIVERGE_DROP = 0.10  # a run whose last round is this far under its best round diverged
IN_BOX_MIN = 0.5  # a fixed box holding less than this share of the initial weights clips the model it trains
BOX = "fixed box, no coins"  # table_ldpfl's range of the noise-free run clipped to the fixed box (issue 51)
RUN_IDENTITY = ("scenario", "run", "fraction", "rounds")  # an LDP-FL run and its setting: figure and table rows


def name(flag: str) -> str:
    """A flag's name: its text before the first ':'."""
    return flag.split(":", 1)[0].strip()


def split(cell) -> list[str]:
    """The flags of a ``flags`` cell ('' and a missing value read back from CSV: none)."""
    text = "" if cell is None or (isinstance(cell, float) and math.isnan(cell)) else str(cell)
    return [f.strip() for f in text.split(";") if f.strip() and f.strip() != "nan"]


def peak(rounds: pd.DataFrame) -> tuple[float, int]:
    """(best accuracy, its round) of a run's global per-round accuracy (rows of party -1 where present)."""
    g = rounds[rounds["party"] == -1] if "party" in rounds else rounds
    best = g.loc[g["accuracy"].idxmax()]
    return float(best["accuracy"]), int(best["round"])


def _missing(*values) -> bool:
    return any(v is None or pd.isna(v) for v in values)


def diverged(row: dict) -> str:
    """'diverged: ...' when the row's final accuracy is more than DIVERGE_DROP under its run's best round."""
    best, final, at = row.get("peak_accuracy"), row.get("accuracy"), row.get("peak_round")
    if _missing(best, final) or best - final <= DIVERGE_DROP:
        return ""
    where = "" if _missing(at) else f" at round {int(at)}"
    return f"diverged: peak {best:.3f}{where}, final {final:.3f}"


def clipped_box(row: dict) -> str:
    """'substitute: ...' when a fixed box holds under IN_BOX_MIN of the run's initial weights."""
    share = row.get("init_in_box")
    if share is None or pd.isna(share) or share >= IN_BOX_MIN:
        return ""
    init = row.get("init") if isinstance(row.get("init"), str) else "he"
    return f"substitute: the fixed box holds {share:.0%} of the initial weights ({init} initialisation)"


def floor(reference: dict, what: str, against: str = "paper") -> str:
    """'utility floor: ...' when a non-private reference row sits more than FLOOR_MARGIN under the paper's
    (``against``: what the paper's value is, in the flag's text)."""
    ours, theirs = reference.get("accuracy"), reference.get("paper_accuracy")
    if ours is None or theirs is None or pd.isna(ours) or pd.isna(theirs) or theirs - ours <= FLOOR_MARGIN:
        return ""
    return f"utility floor: {what} {ours:.3f} ({against} {theirs:.3f})"


def _join(*flags) -> str:
    return "; ".join(dict.fromkeys(f for f in flags if f))


def _dataset_floor(frame: pd.DataFrame, reference: dict, what: str) -> dict:
    """dataset -> its utility-floor flag, from its reference row (``reference``: column filters; of several, the
    most accurate: the floor is flagged only when even the best reference falls short)."""
    if "dataset" not in frame or "accuracy" not in frame:
        return {}
    keep = pd.Series(True, index=frame.index)
    for column, value in reference.items():
        keep &= frame[column] == value if column in frame else False
    best = frame[keep].sort_values("accuracy").drop_duplicates("dataset", keep="last")
    return {r["dataset"]: floor(r, what) for r in best.to_dict("records")}


def _one_per_dataset(frame: pd.DataFrame, range_: str) -> dict:
    """dataset -> its noise-free FedAvg row of table_ldpfl's ``range`` (none: unclipped; BOX: clipped; Table 1
    has one of each per dataset)."""
    if not {"dataset", "method", "range", "accuracy_low", "accuracy_high"} <= set(frame):
        return {}
    rows = frame[(frame["method"] == "FedAvg") & (frame["range"] == range_)]
    return {r["dataset"]: r for r in rows.to_dict("records")}


def box_ceiling(row: dict, box: dict | None, free: dict | None) -> str:
    """'at ceiling: ...' for a fixed-range LDP-FL row whose interval holds its dataset's noise-free run clipped
    to the same box (``box``), when that box by itself costs more than the intervals against unclipped
    averaging (``free``): the box against our model, not the coins, sets the row (issue 51)."""
    if row.get("method") != "LDP-FL" or row.get("range") != "fixed" or box is None or free is None:
        return ""
    if _missing(row.get("accuracy_low"), box["accuracy"], box["accuracy_high"], free["accuracy_low"]):
        return ""
    if (
        box["accuracy_high"] >= free["accuracy_low"]
        or not row["accuracy_low"] <= box["accuracy"] <= row["accuracy_high"]
    ):
        return ""
    return (
        f"at ceiling: noise-free averaging clipped to the same box reaches {box['accuracy']:.4f} "
        f"(unclipped {free['accuracy']:.4f}): the box, not the coins, sets this row"
    )


def ldpfl(frame: pd.DataFrame) -> pd.Series:
    """table_ldpfl's flags: the dataset's noise-free FedAvg against the paper's, each run's divergence and box,
    and a fixed-range row at the ceiling its box sets (:func:`box_ceiling`)."""
    unclipped = {"method": "FedAvg"} | ({"range": "none"} if "range" in frame else {})
    floors = _dataset_floor(frame, unclipped, "noise-free FedAvg")
    boxes, free = _one_per_dataset(frame, BOX), _one_per_dataset(frame, "none")
    return pd.Series(
        [
            _join(
                floors.get(r.get("dataset"), ""),
                diverged(r),
                clipped_box(r),
                box_ceiling(r, boxes.get(r.get("dataset")), free.get(r.get("dataset"))),
            )
            for r in frame.to_dict("records")
        ],
        index=frame.index,
        dtype=object,
    )


def fedmd(frame: pd.DataFrame) -> pd.Series:
    """table2's flags: the dataset's FedMD-NP against the paper's (every FedMD row rests on the same models),
    and each row's run diverging (the seeds' mean accuracy per round: ``peak_accuracy``, ``peak_round``)."""
    floors = _dataset_floor(frame, {"method": "FedMD-NP"}, "FedMD-NP")
    return pd.Series(
        [_join(floors.get(r.get("dataset"), ""), diverged(r)) for r in frame.to_dict("records")],
        index=frame.index,
        dtype=object,
    )


REFERENCE_KEYS = ("dataset", "encoder", "s", "k")  # reverse k-NN: the non-private row of the same clustering


def _rknn_floors(frame: pd.DataFrame) -> dict:
    """(dataset, encoder) -> its utility-floor flag: the encoder's best student on noise-free labels (mechanism
    none) against the non-private accuracy paper 003 prints for the dataset (its Table 1, [general])."""
    if not {"dataset", "encoder", "mechanism", "accuracy"} <= set(frame):
        return {}
    out = {}
    for (dataset, encoder), rows in frame[frame["mechanism"] == "none"].groupby(["dataset", "encoder"]):
        printed = paper.rknn_non_private(dataset)
        best = rows["accuracy"].max()
        if printed is not None:
            what = f"non-private labelling on {encoder}"
            out[(dataset, encoder)] = floor({"accuracy": best, "paper_accuracy": printed}, what)
    return out


def rknn(frame: pd.DataFrame) -> pd.Series:
    """table_rknn's flags: the encoder's noise-free student far under the paper's non-private one (utility
    floor), and a private row at its non-private reference (mechanism none, same clustering: at ceiling)."""
    if "mechanism" not in frame or "accuracy_low" not in frame:
        return pd.Series("", index=frame.index, dtype=object)
    floors = _rknn_floors(frame)
    keys = [k for k in REFERENCE_KEYS if k in frame]
    reference = {tuple(r[k] for k in keys): r for r in frame[frame["mechanism"] == "none"].to_dict("records")}
    out = []
    for r in frame.to_dict("records"):
        ref = reference.get(tuple(r[k] for k in keys))
        flag = ""
        if r["mechanism"] != "none" and ref is not None and not pd.isna(r.get("accuracy_low")):
            if r["accuracy_low"] <= ref["accuracy"] <= r["accuracy_high"]:
                flag = f"at ceiling: the student on noise-free labels reaches {ref['accuracy']:.4f}"
        out.append(_join(floors.get((r.get("dataset"), r.get("encoder")), ""), flag))
    return pd.Series(out, index=frame.index, dtype=object)


def _ldpdl_floors(frame: pd.DataFrame) -> dict:
    """dataset -> its utility-floor flag: the student on true labels (``ceiling_accuracy``) against the best
    accuracy paper 004 prints for the dataset (a noise-free student must reach at least the paper's private ones)."""
    if not {"dataset", "ceiling_accuracy", "paper_accuracy"} <= set(frame):
        return {}
    out = {}
    for dataset, rows in frame.groupby("dataset"):
        ceiling, printed = rows["ceiling_accuracy"].max(), rows["paper_accuracy"].max()
        reference = {"accuracy": ceiling, "paper_accuracy": printed}
        out[dataset] = floor(reference, "student on true labels", "paper's best private row")
    return out


def ldpdl(frame: pd.DataFrame) -> pd.Series:
    """table_ldpdl's flags: the dataset's student on true labels far under the paper's accuracies (utility
    floor), and a row whose teachers stand in for the paper's (``teacher_departure``: substitute)."""
    floors = _ldpdl_floors(frame)
    departures = frame["teacher_departure"] if "teacher_departure" in frame else pd.Series("", index=frame.index)
    return pd.Series(
        [
            _join(floors.get(d, ""), f"substitute: {t}" if split(t) else "")
            for d, t in zip(frame["dataset"] if "dataset" in frame else [None] * len(frame), departures)
        ],
        index=frame.index,
        dtype=object,
    )


TABLES = {"table_ldpfl": ldpfl, "table2": fedmd, "table_rknn": rknn, "table_ldpdl": ldpdl}
# a view or a figure of a table's setting: the dataset-level flags of that table's rows (filters choose them)
INHERITS = {
    "table3": ("table2", {"method": "FedMD-NFDP"}),
    "table4": ("table2", {"method": "FedMD-NFDP"}),
    "table5": ("table2", {"method": "FedMD-NFDP"}),
    "p001_": ("table_ldpfl", {"method": "FedAvg", "range": "none"}),  # not the clipped reference's own flags
    "p002_accuracy_vs_parties": ("table2", {"method": "FedMD-NFDP"}),
    "p002_rounds": ("table2", {"method": "FedMD-NFDP"}),
    "p004_": ("table_ldpdl", {"method": "LDP-DL"}),
    "p003_": ("table_rknn", {}),  # by dataset and encoder: a floor is an encoder's
}
DATASET_LEVEL = ("utility floor", "substitute")  # the flags a figure's rows inherit (not a run's own)


def _inherited(name_: str, data: pd.DataFrame, frames: dict) -> pd.Series | None:
    entry = next((e for prefix, e in INHERITS.items() if name_.startswith(prefix)), None)
    table = frames.get(entry[0]) if entry else None
    if table is None or "dataset" not in data:
        return None
    flagged = of_table(entry[0], table)
    keep = pd.Series(True, index=table.index)
    for column, value in entry[1].items():
        keep &= table[column] == value if column in table else False
    keys = [k for k in ("dataset", "encoder") if k in data and k in table]  # an encoder's floor is its own
    per_setting = {}
    for setting, cells in flagged[keep].groupby([table.loc[keep, k] for k in keys]):
        found = [f for cell in cells for f in split(cell) if name(f) in DATASET_LEVEL]
        per_setting[setting if isinstance(setting, tuple) else (setting,)] = _join(*found)
    own = [per_setting.get(tuple(r[k] for k in keys), "") for r in data.to_dict("records")]
    return pd.Series(own, index=data.index, dtype=object)


def _ldpfl_run(name_) -> LdpflRun | None:
    """The LDP-FL run a ``run`` cell names (None: not an LDP-FL run's name)."""
    return LdpflRun.parse(name_) if isinstance(name_, str) and LDPFL_RUN.fullmatch(name_) else None


def _box_references(table: pd.DataFrame) -> tuple[dict, dict]:
    """table_ldpfl's noise-free references by setting (scenario, fraction, rounds): the clipped runs
    ((setting, box) -> row) and the unclipped ones (setting -> row)."""
    boxes, free = {}, {}
    for r in table[table["method"] == "FedAvg"].to_dict("records"):
        if _missing(*(r[k] for k in RUN_IDENTITY)):
            continue
        setting, run = (str(r["scenario"]), float(r["fraction"]), float(r["rounds"])), _ldpfl_run(r["run"])
        if run is None:
            continue
        if run.clipped:
            boxes[setting, run.radius] = r
        elif run.radius is None:
            free[setting] = r
    return boxes, free


def _same_box(name_: str, data: pd.DataFrame, frames: dict) -> pd.Series | None:
    """A figure row that is a fixed-range LDP-FL run (any epsilon): its ``at ceiling`` flag against Table 1's
    noise-free runs of the same setting (scenario, fraction, rounds), clipped to the same box and unclipped
    (:func:`box_ceiling`).  A setting Table 1 holds no clipped run of (another fraction of clients, another
    number of rounds) is not flagged: nothing measured what the box costs there."""
    entry = next((e for prefix, e in INHERITS.items() if name_.startswith(prefix)), None)
    table = frames.get(entry[0]) if entry else None
    needed = {*RUN_IDENTITY, "method", "accuracy", "accuracy_low", "accuracy_high"}
    if table is None or not set(RUN_IDENTITY) <= set(data) or not needed <= set(table):
        return None
    boxes, free = _box_references(table)
    own = []
    for r in data.to_dict("records"):
        flag = ""
        run = None if _missing(*(r[k] for k in RUN_IDENTITY)) else _ldpfl_run(r["run"])
        if run is not None and run.epsilon is not None and run.radius != "adaptive":
            setting = (str(r["scenario"]), float(r["fraction"]), float(r["rounds"]))
            fixed = {**r, "method": "LDP-FL", "range": "fixed"}
            flag = box_ceiling(fixed, boxes.get((setting, run.radius)), free.get(setting))
        own.append(flag)
    return pd.Series(own, index=data.index, dtype=object)


def of_table(name_: str, frame: pd.DataFrame) -> pd.Series:
    """The flags of a table's rows (a table without its own flag rules: none)."""
    rule = TABLES.get(name_)
    return rule(frame) if rule else pd.Series("", index=frame.index, dtype=object)


def of_source(name_: str, frame: pd.DataFrame, frames: dict) -> pd.Series:
    """The flags of a claim source's rows: a table's own, or a view's and figure's inherited dataset-level flags
    joined with their rows' own (a run that diverged, a box that clips)."""
    if name_ in TABLES:
        own = of_table(name_, frame)
    else:  # a view's or a figure's rows: their runs' own flags (a run that diverged, a box that clips)
        own = pd.Series([_join(diverged(r), clipped_box(r)) for r in frame.to_dict("records")], index=frame.index)
        same = _same_box(name_, frame, frames)
        if same is not None:
            own = pd.Series([_join(*split(a), *split(b)) for a, b in zip(own, same)], index=frame.index)
    inherited = _inherited(name_, frame, frames)
    if inherited is None:
        return own.astype(object)
    return pd.Series([_join(*split(a), *split(b)) for a, b in zip(inherited, own)], index=frame.index, dtype=object)
