"""The round runner every round protocol shares (FedMD; LDP-FL): resumable after a kill, one log line
and one table row per party per round.

A protocol plays round 0 (initialization) and rounds 1..R; after each, its ``evaluate`` gives the
round's rows, which the runner stamps with the round's wall time, and its ``state`` is checkpointed,
so a killed job started again continues after the last finished round with identical results.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

from ..train.checkpoint import load_checkpoint, save_checkpoint

log = logging.getLogger(__name__)


class RoundProtocol(Protocol):
    rounds: int

    def play(self, t: int) -> None:
        """Round t: 0 is the initialization, 1..rounds the collaboration rounds."""

    def evaluate(self, t: int) -> list[dict]:
        """The rows of round t (one per party), after it was played."""

    def state(self) -> dict:
        """Everything needed to continue after this round (models, optimizers, generators, ...)."""

    def restore(self, state: dict) -> None: ...

    def describe(self, rows: list[dict]) -> str:
        """The round's log line."""


def run_rounds(protocol: RoundProtocol, checkpoint=None, fingerprint: str = "", on_round=None) -> list[dict]:
    """Play every round not yet played; returns all rows (``round_seconds`` set on each)."""
    saved = load_checkpoint(checkpoint, fingerprint)
    history, start = [], 0
    if saved is not None:
        protocol.restore(saved["protocol"])
        history, start = saved["history"], saved["round"] + 1
        log.info("resumed from %s after round %d", checkpoint, saved["round"])
    for t in range(start, protocol.rounds + 1):
        t0 = time.perf_counter()
        protocol.play(t)
        rows = protocol.evaluate(t)
        seconds = time.perf_counter() - t0
        for row in rows:
            row["round_seconds"] = seconds
        history += rows
        save_checkpoint(checkpoint, fingerprint, round=t, history=history, protocol=protocol.state())
        log.info("round %d/%d: %s (%.1f s)", t, protocol.rounds, protocol.describe(rows), seconds)
        if on_round:
            on_round(rows)
    return history


def wall_seconds(history: list[dict]) -> float:
    """A run's compute time: its rounds' wall times summed, so that it survives a resume."""
    return float(sum({h["round"]: h["round_seconds"] for h in history}.values()))
