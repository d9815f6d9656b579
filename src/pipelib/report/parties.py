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


def over_seeds(rows: list[dict], result_paths: list) -> dict:
    """A FedMD row over its seeds' runs (``rows``: their result rows, the first the row's own; ``result_paths``
    beside their rounds tables): the guarantee of the run with the largest (epsilon, delta) (it holds for every
    model the row averages), the first run's scenario and seed, the mean of the runs' accuracies, its 95 %
    interval over the seeds and the test records (one run: over its parties,
    :func:`pipelib.stats.repeated_accuracy_interval`), the spread of all their parties, that of the runs over
    the seeds (two or more) and the number of seeds."""
    parties = [final_party_accuracies(Path(p).with_name("rounds.parquet")) for p in result_paths]
    row = {**max(rows, key=lambda x: (x["epsilon"], x["delta"])), **{k: rows[0][k] for k in ("scenario", "seed")}}
    low, high = stats.repeated_accuracy_interval(parties, int(row["test_n"]))
    return {
        **row,
        "seeds": len(rows),
        "accuracy": float(np.mean([x["accuracy"] for x in rows])),
        "accuracy_low": low,
        "accuracy_high": high,
        "accuracy_std": float(np.concatenate(parties).std()),
        # the spread of the runs' accuracies over the seeds: what more seeds average down
        "accuracy_seed_std": float(np.std([x["accuracy"] for x in rows], ddof=1)) if len(rows) > 1 else None,
        "accuracy_any_class": float(np.mean([x["accuracy_any_class"] for x in rows])),
        "wall_seconds": float(sum(x["wall_seconds"] for x in rows)),
    }
