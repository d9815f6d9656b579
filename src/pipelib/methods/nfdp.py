"""NFDP sampling (paper 002): each party draws k of its own n records, once, before any training.

The draw is the whole privacy mechanism of FedMD-NFDP: the party then trains and answers only from
the sample, so its guarantee (:func:`pipelib.privacy.nfdp.guarantee`) holds for everything it ever
releases.  The party's job writes the sample and the guarantee of that one release.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..io import read_table, take_rows, write_csv, write_table
from ..privacy import LEDGER_COLUMNS, Draw, delta_vacuous, nfdp, read_releases, release_row, write_releases
from ..seeding import release_key, release_rng


def sample_party(
    party_path, release: dict, seed: int, out: dict, randomness: str = "seeded", rule: str = "nfdp_sample"
) -> dict:
    """Party job: draw this party's NFDP sample from its own table; write the sample and its ledger row.

    ``release`` identifies the release (the job's wildcards: scenario, sampling, k, party); the draw is
    keyed by all of it (:func:`pipelib.seeding.release_rng`)."""
    scenario, sampling, k, party = release["scenario"], release["sampling"], int(release["k"]), int(release["party"])
    table = read_table(party_path)
    n = table.num_rows
    if sampling == nfdp.WITHOUT_REPLACEMENT and k > n:
        raise ValueError(
            f"scenario {scenario!r} party {party} holds n={n} records: k={k} without "
            f"replacement is impossible; use k <= {n} or sampling with_replacement"
        )
    generator = release_rng(seed, randomness, rule, release)
    if sampling == nfdp.STRATIFIED:  # FedMD's draw: k split over the party's classes (class counts published)
        labels = np.asarray(table.column("label"))
        rows, guarantee = nfdp.draw_stratified(labels, k, generator), nfdp.stratified_guarantee(np.bincount(labels), k)
        extras = {
            **nfdp.ledger_extras(n, k, nfdp.WITH_REPLACEMENT),
            "sampling": sampling,
            "epsilon_log10_paper_convention": guarantee.epsilon / np.log(10.0),
            "delta_vacuous": delta_vacuous(guarantee.delta, n),
        }
    else:
        rows, guarantee = nfdp.draw(n, k, sampling, generator), nfdp.guarantee(n, k, sampling)
        extras = nfdp.ledger_extras(n, k, sampling)
    sample = take_rows(
        table,
        rows,
        extra={"draw": np.arange(k, dtype=np.int32)},
        meta_update={"role": "nfdp_sample", "sampling": sampling, "k": k, "n": n},
    )
    write_table(sample, out["sample"])
    row = release_row(
        "FedMD-NFDP",
        scenario,
        str(out["sample"]),
        party,
        f"nfdp-{sampling}",
        guarantee,
        drawn=Draw(randomness, release_key(rule, release)),
        **extras,
        seed=seed,
    )
    write_releases([row], out["ledger"])
    return row


def write_ledger(row_paths, out_path) -> pd.DataFrame:
    """Collect the parties' ledger rows of one (scenario, sampling, k) into one CSV, one row per party."""
    ledger = pd.DataFrame([r for p in row_paths for r in read_releases(p)]).sort_values("party", kind="stable")
    ledger = ledger[[c for c in LEDGER_COLUMNS if c in ledger] + [c for c in ledger if c not in LEDGER_COLUMNS]]
    write_csv(ledger, out_path)
    return ledger
