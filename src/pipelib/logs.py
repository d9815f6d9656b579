"""Logging for workflow jobs: everything a job prints goes to its rule's log file."""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path


def to_log(path) -> logging.Logger:
    """Send stdout, stderr and ``logging`` records of this process to ``path`` (appending).

    An uncaught error is written to the log in full and, as one line naming the log, to the
    console, so that the reason a job failed shows next to Snakemake's own error report.
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    console = sys.__stderr__
    stream = open(path, "a", buffering=1)
    sys.stdout = sys.stderr = stream
    logging.basicConfig(
        stream=stream, level=logging.INFO, force=True, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    def report(kind, err, tb):
        traceback.print_exception(kind, err, tb, file=stream)
        print(f"pipelib error: {kind.__name__}: {err}\n  (full traceback in {path})", file=console)

    sys.excepthook = report
    return logging.getLogger("pipelib")
