"""What keeps a failed run from losing good outputs: cheap integrity checks of a run's files, the
pre-flight check of every job's inputs before any job runs, and the run record that names a results
folder's expected outputs and the exact command that rebuilds one of them.

Snakemake deletes a job's old outputs just before it runs the job.  A damaged input (truncated, or
overwritten by hand) makes Snakemake re-run the jobs that read it, which then fail on it, and their good
outputs are gone.  :func:`preflight` runs in the workflow's ``onstart`` handler, after the DAG is built and
before the first job: it reads the footer, header or directory of every existing input of every job
about to run, and its content against the SHA-256 recorded when it was written (files whose size,
modification time and inode it has already seen pass are skipped, except in a forced re-run) and stops
the run, naming the file and the command that rebuilds it, while nothing has been deleted.

This module stays light (no torch): Snakemake imports it in its own process.
"""

from __future__ import annotations

import csv
import gzip
import json
import shlex
import sys
import zipfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from .io import WRITTEN_KEY, content_hash, recorded_hash, write_json, zip_crc_problem
from .schema import result_problem
from .words import plural

RUN_RECORD = Path(".pipelib") / "run.json"  # under a results folder: see write_run_record
CHECKED = Path(".snakemake") / "pipelib" / "checked-inputs.json"  # under the working directory
QUICK = (".parquet", ".json", ".csv", ".npy", ".pt", ".gz")
RAW_VIEW = Path(".snakemake") / "pipelib" / "raw"  # links to the raw files an ingest reads (common.smk)


def quick_check(path) -> str | None:
    """Why ``path`` cannot be read, from its cheapest complete-enough part, or None: a Parquet footer (and
    the row count it was written with), a JSON or CSV parse (a ``result.json`` with every required column of
    a result row), a .npy header against the file's size, a torch archive's directory and CRCs.  Other kinds
    of file are not checked."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            meta = pq.read_metadata(path)
            written = (meta.metadata or {}).get(WRITTEN_KEY)
            if written and meta.num_rows != json.loads(written)["rows"]:
                return f"holds {meta.num_rows} rows, written with {json.loads(written)['rows']}"
        elif path.suffix == ".json":
            row = json.loads(path.read_text())
            if path.name == "result.json":  # it parses, but may be no result row ({} too)
                return result_problem(row)
        elif path.suffix == ".csv":
            text = path.read_text()
            if not text.endswith("\n"):
                return "truncated (it does not end with a line break)"
            rows = list(csv.reader(text.splitlines()))
            if not rows:
                return "empty (no header)"
            widths = {len(r) for r in rows if r}
            if len(widths) > 1:
                return f"rows of {sorted(widths)} fields under a header of {len(rows[0])}"
        elif path.suffix == ".npy":
            with path.open("rb") as f:
                version = np.lib.format.read_magic(f)
                read_header = (
                    np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read_header(f)
                expected = f.tell() + int(np.prod(shape)) * dtype.itemsize
            if not dtype.hasobject and path.stat().st_size != expected:
                return f"{path.stat().st_size} bytes, its header says {expected}"
        elif path.suffix == ".gz":  # a raw file read when verify_checksums is off: decompress it to its end
            with gzip.open(path) as f:
                while f.read(1 << 22):
                    pass
        elif path.suffix == ".pt":
            with zipfile.ZipFile(path) as z:
                if not any(n.endswith("data.pkl") for n in z.namelist()):
                    return "a zip archive without a torch data.pkl"
            return zip_crc_problem(path)  # every member's CRC: damage inside a tensor would load as wrong weights
    except FileNotFoundError:
        raise
    except Exception as err:  # Arrow, numpy, zipfile, JSON and CSV readers raise many kinds
        return f"{type(err).__name__}: {err}"
    return None


def unproduced_inputs(jobs, results_dir) -> set[str]:
    """The inputs under ``results_dir`` of ``jobs`` ((inputs, outputs) per job) that no job among them
    produces: the existing files the run will read as they are."""
    produced = {o for _, outputs in jobs for o in outputs}
    root = Path(results_dir)
    return {i for inputs, _ in jobs for i in inputs if i not in produced and Path(i).is_relative_to(root)}


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def why_damaged(path) -> str | None:
    """:func:`quick_check`, then the file's content against the hash recorded when it was written (a file
    written outside pipelib's writers has none)."""
    why = quick_check(path)
    if why is None:
        recorded = recorded_hash(path)
        if recorded is not None and content_hash(path) != recorded:
            why = f"its content differs from what its job wrote (SHA-256 {recorded[:12]}... in .pipelib/hashes)"
    return why


def preflight(paths, checked_file=CHECKED, rehash: bool = False) -> list[tuple[str, str]]:
    """(path, why) for every damaged file among ``paths`` that exist (:func:`why_damaged`).  The stamps
    (size, mtime, inode) of the files that pass are remembered in ``checked_file``: an unchanged file is not
    read again, unless ``rehash`` (a forced re-run: a file overwritten in place with its mtime restored keeps
    its stamp)."""
    checked_file = Path(checked_file)
    try:
        seen = json.loads(checked_file.read_text())
    except (FileNotFoundError, ValueError):
        seen = {}
    damaged = []
    for p in sorted({str(p) for p in paths}):
        path = Path(p)
        if path.suffix not in QUICK or not path.is_file():
            continue
        stamp = _stamp(path)
        if seen.get(p) == stamp and not rehash:
            continue
        why = why_damaged(path)
        if why:
            damaged.append((p, why))
            seen.pop(p, None)
        else:
            seen[p] = stamp
    write_json(seen, checked_file)
    return damaged


# ------------------------------------------------------------------------------------- run record


def write_run_record(results_dir, record: dict) -> Path:
    """``<results_dir>/.pipelib/run.json``: how this results folder was made (Snakefile, working directory,
    --configfile and --config of the last run) and every output its preset's ``rule all`` should have."""
    path = Path(results_dir) / RUN_RECORD
    write_json(record, path)
    return path


def read_run_record(results_dir) -> dict | None:
    """The run record of a results folder, or None when it has none (or it is unreadable)."""
    try:
        return json.loads((Path(results_dir) / RUN_RECORD).read_text())
    except (FileNotFoundError, ValueError):
        return None


def _relative(path, workdir: Path) -> str:
    """``path`` relative to ``workdir`` when inside it (so a moved checkout keeps working), else absolute."""
    path = Path(workdir, path).resolve()
    return str(path.relative_to(workdir)) if path.is_relative_to(workdir) else str(path)


def run_record(snakefile, workdir, results_dir, configfiles, config_args, expected) -> dict:
    """The fields of a run record; paths relative to the working directory where they lie inside it."""
    workdir = Path(workdir).resolve()
    return {
        "results_dir": _relative(results_dir, workdir),
        "snakefile": _relative(snakefile, workdir),
        "configfiles": [_relative(c, workdir) for c in configfiles],
        "config_args": list(config_args),
        "expected": sorted({_relative(p, workdir) for p in expected}),
    }


def workdir_of(results_dir, record: dict) -> Path:
    """The working directory a results folder was made from: the folder minus the record's results_dir
    (wherever the checkout has moved since)."""
    root, parts = Path(results_dir).resolve(), Path(record["results_dir"]).parts
    if root.parts[-len(parts) :] == parts:
        return Path(*root.parts[: -len(parts)])
    return Path.cwd().resolve()


def _snakemake_exe(local: bool) -> str:
    if local and Path(".venv/bin/snakemake").exists():
        return ".venv/bin/snakemake"
    beside = Path(sys.executable).parent / "snakemake"  # the environment pipelib runs in
    return str(beside) if beside.exists() else "snakemake"


def rebuild_command(path, record: dict | None, workdir=None, force: bool = True, elsewhere: bool | None = None) -> str:
    """The shell command that (re)builds ``path`` (one path, or a list: one Snakemake call for all of them) as
    the recorded run made it: the targets first, then --configfile and --config (they swallow what follows);
    --directory when run from elsewhere (``elsewhere`` forces it: a run started with --directory prints its
    hints from inside that folder, but the user types them where they started).  Without a record, the command
    for the repository's layout (results/<preset> with presets/<preset>.yaml)."""
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    if record is None:
        here = Path.cwd().resolve()
        paths = [p.relative_to(here) if p.is_absolute() and p.is_relative_to(here) else p for p in paths]
        first = paths[0]
        name = first.parts[1] if len(first.parts) > 2 and first.parts[0] == "results" else None
        extra = ["--configfile", f"presets/{name}.yaml"] if name and Path(f"presets/{name}.yaml").is_file() else []
        forced = ["--force"] if force else []
        return shlex.join([".venv/bin/snakemake", *map(str, paths), "--cores", "2", *forced, *extra])
    workdir = Path(workdir or Path.cwd()).resolve()
    local = Path.cwd().resolve() == workdir if elsewhere is None else not elsewhere
    targets = [_relative(p, workdir) if p.is_absolute() else str(p) for p in paths]
    cmd = [_snakemake_exe(local), *targets, "--cores", "2"] + (["--force"] if force else [])
    if record["snakefile"] != "Snakefile":
        cmd += ["--snakefile", str(Path(workdir, record["snakefile"]))]
    if not local:
        cmd += ["--directory", str(workdir)]
    for c in record["configfiles"]:
        cmd += ["--configfile", c if local or Path(c).is_absolute() else str(workdir / c)]
    if record["config_args"]:
        cmd += ["--config", *record["config_args"]]
    return shlex.join(cmd)


def stop_message(damaged: list[tuple[str, str]], record: dict | None, workdir=None, elsewhere=None) -> str:
    """The pre-flight check's refusal: every damaged input and the command that rebuilds each."""
    are = "is" if len(damaged) == 1 else "are"
    files = plural(len(damaged), "input file")
    lines = [f"pipelib: {files} of this run {are} damaged; nothing was run and nothing deleted:"]
    for path, why in damaged:
        if Path(path).is_relative_to(RAW_VIEW):  # a raw file: no rule makes it
            where = Path(path).resolve()
            lines += [f"  {where}: {why}", "    restore: copy it again from the dataset's source (docs/data.md)"]
            continue
        lines += [f"  {path}: {why}", f"    rebuild: {rebuild_command(path, record, workdir, elsewhere=elsewhere)}"]
    lines.append("Then run your target again: what depends on a rebuilt file re-runs.")
    return "\n".join(lines)


def note_dry_run_lock(argv: list[str], lock_dir=".snakemake/locks") -> None:
    """Print :func:`dry_run_lock_note` to stderr when there is one (the workflow calls it at parse time)."""
    note = dry_run_lock_note(argv, lock_dir)
    if note:
        print(note, file=sys.stderr)


def dry_run_lock_note(argv: list[str], lock_dir) -> str | None:
    """For a dry run (-n, -np, --dry-run) in a folder that another run, or a killed one, holds locked: the
    note that a real run will be refused until --unlock (a dry run itself ignores the lock)."""
    short = [a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--")]
    dry = any("n" in a and a.isalpha() for a in short) or bool({"--dry-run", "--dryrun", "--just-print"} & set(argv))
    if not dry or not any(Path(lock_dir).glob("*.lock")):
        return None
    return (
        "pipelib: this folder is locked by another Snakemake run, or by one that was killed: a real run will "
        "say 'Directory cannot be locked'. If none is running here, `snakemake --unlock` (with the same "
        "--configfile) removes the lock; then --rerun-incomplete re-runs what the kill interrupted."
    )
