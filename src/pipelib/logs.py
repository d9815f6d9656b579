"""Logging for workflow jobs: everything a job prints goes to its rule's log file; the console gets one
line when the job starts, its progress lines and, on failure, the reason and the log's path."""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path

# The running job, as the console names it (set by to_log): "fedmd scenario=femnist_iid answer=softmax run=np".
JOB = ""


def console(message: str) -> None:
    """One line on the console (the terminal Snakemake runs in), whatever the job's streams are."""
    print(f"pipelib: {message}", file=sys.__stderr__, flush=True)


def to_log(job) -> logging.Logger:
    """Send stdout, stderr and ``logging`` records of this process to the job's log (appending).

    ``job`` is the ``snakemake`` object of a rule's script (or a log path).  A start line naming the job
    and its log goes to the console; an uncaught error is written to the log in full and, as one line
    naming the log, to the console, next to Snakemake's own error report.
    """
    global JOB
    path = job if isinstance(job, (str, Path)) else job.log[0]
    if not isinstance(job, (str, Path)):
        JOB = " ".join([job.rule, *(f"{k}={v}" for k, v in dict(job.wildcards).items())])
        console(f"start {JOB} (log: {path})")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    stream = open(path, "a", buffering=1)
    sys.stdout = sys.stderr = stream
    logging.basicConfig(
        stream=stream, level=logging.INFO, force=True, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    def report(kind, err, tb):
        traceback.print_exception(kind, err, tb, file=stream)
        print(f"pipelib error: {kind.__name__}: {err}\n  (full traceback in {path})", file=sys.__stderr__)

    sys.excepthook = report
    return logging.getLogger("pipelib")
