"""The result-row schema: every method's final job writes its result as rows of these columns, and the
paper tables, ``results/compare.csv`` and the reproduction pages are views of them.

The guarantee's columns come from the :class:`pipelib.privacy.Guarantee` record the release wrote,
never from the config.  Method-specific columns (k, sigma, encoder, ...) follow the common ones.
"""

from __future__ import annotations

from .io import read_json
from .privacy import GUARANTEE_COLUMNS, Guarantee

IDENTITY = ("method", "scenario", "public_dataset", "private_dataset", "mechanism")
ACCURACY = ("accuracy", "accuracy_std", "accuracy_any_class", "label_accuracy")
RUN = ("n", "parties", "preset", "seed", "wall_seconds", "device", "precision")
RESULT_COLUMNS = IDENTITY + GUARANTEE_COLUMNS + ("delta_vacuous",) + ACCURACY + RUN
REQUIRED = IDENTITY + GUARANTEE_COLUMNS + ("accuracy", "n", "preset", "seed", "wall_seconds", "device")


def result_row(guarantee: Guarantee, **fields) -> dict:
    """One result row: the common columns in schema order (missing optional ones as None), then extras.

    Raises ValueError naming a missing required column."""
    row = {**guarantee.row(), **fields}
    missing = [c for c in REQUIRED if c not in row]
    if missing:
        raise ValueError(f"result row lacks required columns {missing}")
    return {c: row.get(c) for c in RESULT_COLUMNS} | {k: v for k, v in row.items() if k not in RESULT_COLUMNS}


def result_problem(row) -> str | None:
    """Why a parsed ``result.json`` is no result row (the required columns it lacks; all of them when it is
    not a JSON object), or None."""
    missing = list(REQUIRED) if not isinstance(row, dict) else [c for c in REQUIRED if c not in row]
    return f"not a result row: it lacks {', '.join(missing)}" if missing else None


def read_result(path) -> dict:
    """A result row from its ``result.json``; a file that is not one (``{}``, a list, a row without its
    guarantee) raises ValueError naming the file and the missing keys."""
    row = read_json(path)
    problem = result_problem(row)
    if problem:
        raise ValueError(f"{path} is {problem} (rebuild it with its job)")
    return row
