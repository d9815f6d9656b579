"""The parties of a FedMD run as the reports read them: each party's final test accuracy (the run's rounds
table) and the 95 % interval of their mean.  Shared by the tables and the figures, so that neither module's
edits re-run the other's rules."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import stats
from ..io import read_table


def final_party_accuracies(rounds_path) -> np.ndarray:
    """Each party's test accuracy after the last round of a FedMD run (its rounds table)."""
    rounds = read_table(rounds_path, columns=["round", "party", "accuracy"]).to_pandas()
    last = rounds[rounds["round"] == rounds["round"].max()].sort_values("party")
    return last["accuracy"].to_numpy(dtype=np.float64)


def party_interval(result_path, test_n: int) -> tuple[float, float]:
    """The 95 % interval of a FedMD row's accuracy (the mean over its parties): over its parties' final
    accuracies (its rounds table, beside the result row) and its ``test_n`` test records."""
    return stats.mean_accuracy_interval(
        final_party_accuracies(Path(result_path).with_name("rounds.parquet")), int(test_n)
    )
