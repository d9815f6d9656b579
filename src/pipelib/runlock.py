"""One run per results folder: the workflow's ``onstart`` handler takes an exclusive lock on
``<results>/.pipelib-run.lock`` for the life of the Snakemake process, and a second run on the same folder,
whatever its targets, stops before it starts any job, naming the run that holds it.

Snakemake's own lock lets two runs with disjoint outputs share a folder, and the one that ends first
deletes the whole ``.snakemake/locks`` folder, the other's locks included.  This lock is an advisory
``flock`` on an open file: the kernel drops it when the process ends, however it ends (``kill -9``
included), so a stale lock cannot outlive its run; the file keeps the last holder's description only as
a message.  On a cluster the lock is taken by the Snakemake process that submits the jobs (job steps run
without hooks); its results folder must sit on a file system with working ``flock`` (local disks, NFSv4,
Lustre and GPFS mounted with locking)."""

from __future__ import annotations

import datetime
import fcntl
import os
import socket
import sys
from pathlib import Path

LOCK_NAME = ".pipelib-run.lock"
_HELD: dict[str, object] = {}  # folder -> the open file whose lock this process holds (kept open until exit)


class FolderInUse(RuntimeError):
    """Another run holds the results folder."""


def holder_text(command: list[str] | None = None) -> str:
    """Who holds the lock: process id, host, start time and command line."""
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return f"pid {os.getpid()} on {socket.gethostname()}, started {started}: {' '.join(command or sys.argv)}"


def hold(folder, command: list[str] | None = None) -> Path:
    """Take the folder's run lock for the rest of this process (a second call from the same process is a
    no-op); raise :class:`FolderInUse` naming the holder when another process has it."""
    folder = Path(folder)
    key = str(folder.resolve())
    if key in _HELD:
        return folder / LOCK_NAME
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    handle = open(path, "a+")  # never truncated before the lock is ours: the holder's text stays readable
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "a process that has not written its name yet"
        handle.close()
        raise FolderInUse(
            f"pipelib: another run is using the results folder {folder}/ ({holder}). Nothing was started. Wait "
            f"for it to end (its lock is released when its Snakemake process exits, however it exits), or run "
            f"this one with another results folder (--config results_dir=...)."
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(holder_text(command) + "\n")
    handle.flush()
    _HELD[key] = handle
    return path


def release(folder) -> None:
    """Release the folder's lock early (normally the process's exit does it)."""
    handle = _HELD.pop(str(Path(folder).resolve()), None)
    if handle is not None:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
