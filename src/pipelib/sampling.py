"""NFDP sampling: each party draws k of its own n records, once, before any training.

The draw is the whole privacy mechanism of FedMD-NFDP (paper 002): the party then trains and
answers only from the sample, so its privacy ledger row (``pipelib.privacy.nfdp``) holds for
everything it ever releases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from .io import read_json, take_rows, write_csv, write_json, write_table
from .privacy import SAMPLINGS, WITH_REPLACEMENT, WITHOUT_REPLACEMENT, nfdp_ledger_row
from .seeding import rng


LEDGER_COLUMNS = ("scenario", "sampling", "k", "party", "n", "epsilon", "delta", "epsilon_log10",
                  "delta_vacuous", "accountant", "seed")


def draw(n: int, k: int, sampling: str, generator: np.random.Generator) -> np.ndarray:
    """Row positions of a size-k sample of range(n): uniform k-subset, or k uniform draws with replacement.

    These are exactly the samplers that Theorems 1 and 2 analyse (fixed size k, not Poisson).
    """
    if sampling == WITHOUT_REPLACEMENT:
        if k > n:
            raise ValueError(f"cannot draw k={k} records without replacement from n={n}")
        return generator.choice(n, size=k, replace=False)
    if sampling == WITH_REPLACEMENT:
        return generator.integers(0, n, size=k)
    raise ValueError(f"unknown sampling {sampling!r}; allowed: {', '.join(SAMPLINGS)}")


def sample_party(party_path, scenario: str, party: int, sampling: str, k: int, seed: int, out: dict) -> dict:
    """Party job: draw this party's NFDP sample from its own table; write the sample and its ledger row."""
    table = pq.read_table(party_path)
    n = table.num_rows
    if sampling == WITHOUT_REPLACEMENT and k > n:
        raise ValueError(f"scenario {scenario!r} party {party} holds n={n} records: k={k} without "
                         f"replacement is impossible; use k <= {n} or sampling with_replacement")
    rows = draw(n, k, sampling, rng(seed, "nfdp", scenario, sampling, k, party))
    sample = take_rows(table, rows, extra={"draw": np.arange(k, dtype=np.int32)},
                       meta_update={"role": "nfdp_sample", "sampling": sampling, "k": k, "n": n})
    write_table(sample, out["sample"])
    row = {"scenario": scenario, **nfdp_ledger_row(party, n, k, sampling), "seed": seed}
    write_json(row, out["ledger"])
    return row


def write_ledger(row_paths, out_path) -> pd.DataFrame:
    """Collect the parties' ledger rows of one (scenario, sampling, k) into one CSV, one row per party."""
    ledger = pd.DataFrame([read_json(p) for p in row_paths]).sort_values("party", kind="stable")
    ledger = ledger[[c for c in LEDGER_COLUMNS if c in ledger] + [c for c in ledger if c not in LEDGER_COLUMNS]]
    write_csv(ledger, out_path)
    return ledger
