"""``pipelib verify``: check every output under a results folder, and print how to rebuild what is broken.

It reports every problem in one pass (exit 1 if any): files its preset's ``rule all`` should have made
that are missing (from the folder's run record, :mod:`pipelib.integrity`); files that do not read;
tables that disagree with their sources.  Each problem comes with the exact command that rebuilds the
file, with the --configfile and --config the folder was made with.  A folder without a run record and
without a pipelib results layout is refused (exit 2).

Checks: every file reads (Parquet, JSON, CSV, .npy, torch files); a Parquet table holds the rows and
columns it was written with (recorded in its footer by :func:`pipelib.io.write_table`); the report tables
agree with the files they were made from (``table2.csv`` and ``table_rknn.csv`` with the result rows,
``compare.csv`` with every result row, ``privacy_ledger.csv`` with every release record). Runs on an
audited scenario variant (``<scenario>-canaries-<adjacency>``, docs/audit.md) belong to the audit, not to
those two tables: they are read, never counted; so are the re-runs of FedMD's budget ablation
(``fedmd_budget/``), whose rows are ``fedmd_budget.csv``'s.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from .integrity import read_run_record, rebuild_command, workdir_of
from .io import WRITTEN_KEY, content_hash, read_csv, read_json, read_table, recorded_hash
from .privacy.nfdp import STRATIFIED
from .runs import LDPFL_CLIP
from .schema import result_problem
from .train.checkpoint import load_torch
from .words import plural

SKIP = ("logs", "benchmarks")
# re-runs of table rows at other settings (FedMD's budget and loop ablations, the pooled ceilings): rows of
# their own table, not of table2.csv or compare.csv
ABLATIONS = ("fedmd_budget", "fedmd_ablation", "centralized_pooled")
# noise-free references that are a column of a table, not a row (paper 004's student on true labels)
REFERENCES = ("ceiling",)
AUDITED_VARIANT = re.compile(r".+-canaries-[a-z]+$")
REPEAT = re.compile(r".+-s[1-9][0-9]*$")  # a Table 2 repeat's scenario (config.replicate)


def _ablation_only(path: Path) -> bool:
    """A release only an ablation makes (its runs, or FedMD's stratified samples): not in the ledger of rule all."""
    return bool(set(path.parts) & set(ABLATIONS)) or any(part.startswith(f"{STRATIFIED}-k") for part in path.parts)


def _audited(path: Path) -> bool:
    """A file of a run on an audited scenario variant (the audit's region of the DAG)."""
    return any(AUDITED_VARIANT.match(part) for part in path.parts)


def _repeat(path: Path) -> bool:
    """A file of a repeat (seed > 0) of a Table 2 row: averaged into table2.csv, not a row of its own."""
    return any(REPEAT.match(part) for part in path.parts)


def _check_file(path: Path) -> str | None:
    """Why ``path`` is broken, or None: it does not read in full, or its content is not what its job wrote
    (the SHA-256 recorded at the write)."""
    try:
        if path.suffix == ".parquet":
            table = read_table(path)
            written = (pq.read_schema(path).metadata or {}).get(WRITTEN_KEY)
            if written:
                w = json.loads(written)
                if table.num_rows != w["rows"] or table.column_names != w["columns"]:
                    return (
                        f"holds {table.num_rows} rows / {len(table.column_names)} columns, written with "
                        f"{w['rows']} / {len(w['columns'])}"
                    )
        elif path.suffix == ".json":
            row = read_json(path)
            if path.name == "result.json" and result_problem(row):  # parses, but is no result row
                return result_problem(row)
        elif path.suffix == ".csv":
            read_csv(path)
        elif path.suffix == ".npy":
            np.load(path, mmap_mode="r")
        elif path.suffix == ".pt":
            load_torch(path)
    except Exception as err:
        return str(err).split(". The file is damaged")[0]
    recorded = recorded_hash(path)
    if recorded is not None and content_hash(path) != recorded:
        return f"its content differs from what its job wrote (SHA-256 {recorded[:12]}... in .pipelib/hashes)"
    return None


def _same(a, b) -> bool:
    return (pd.isna(a) and pd.isna(b)) or a == b


def _row_against_result(table, row: dict, results: dict, keys: tuple, name: str, repeats: dict | None = None) -> list:
    """A table row against the result.json it was made from (the first of ``results`` equal to it in
    ``keys``; epsilon compared as a float): missing, or an accuracy that differs.  A row of ``seeds`` > 1
    runs: its accuracy is the mean of its own and its repeats' (``repeats``: the repeats' result rows,
    their scenario <scenario>-s<i>)."""

    def same(v: dict) -> bool:
        if not all(_same(v.get(c), row[c]) for c in keys if c != "epsilon"):
            return False
        return "epsilon" not in keys or _same(float(v.get("epsilon")), float(row["epsilon"]))

    match = [v for v in results.values() if same(v)]
    if not match:
        return [(table, f"{name}: its result.json is missing")]
    seeds = row.get("seeds")
    if pd.isna(seeds) or int(seeds) == 1:
        want = match[0]["accuracy"]
    else:
        of_row = re.escape(str(row["scenario"])) + r"-s[1-9][0-9]*"
        runs = [match[0]] + [
            v
            for v in (repeats or {}).values()
            if re.fullmatch(of_row, str(v.get("scenario"))) and same({**v, "scenario": row["scenario"]})
        ]
        if len(runs) != int(seeds):
            return [(table, f"{name}: {int(seeds)} seeds, but {len(runs)} result.json files of its runs")]
        want = float(np.mean([v["accuracy"] for v in runs]))
    if not (_same(want, row["accuracy"]) or abs(float(want) - float(row["accuracy"])) < 1e-12):  # a mean: float sums
        return [(table, f"{name}: accuracy differs from its result.json ({row['accuracy']} vs {want})")]
    return []


def _intermediate(path: Path) -> bool:
    """An LDP-DL student's result before its run's last iteration (``iter-<t>/result.json``): not a row."""
    if not path.parent.name.startswith("iter-"):
        return False
    last = max(int(p.name.split("-")[1]) for p in path.parent.parent.glob("iter-*") if (p / "result.json").is_file())
    return int(path.parent.name.split("-")[1]) < last


def _consistency(root: Path) -> list[tuple[Path, str]]:
    """Report tables that disagree with the files they are made from."""
    problems = []
    readable = {
        p: read_json(p)
        for p in root.glob("**/result.json")
        if not set(p.parts) & set(SKIP + ABLATIONS + REFERENCES)
        and not any(LDPFL_CLIP.fullmatch(part) for part in p.parts)  # Table 1's box reference: no compare row
        and not _intermediate(p)
        and not _audited(p)
        and _check_file(p) is None
    }  # an unreadable result.json is reported by the file checks; the tables are checked against the rest
    results = {p: v for p, v in readable.items() if not _repeat(p)}
    repeats = {p: v for p, v in readable.items() if _repeat(p)}
    table2 = root / "table2.csv"
    if table2.is_file():
        rows = read_csv(table2)
        for r in rows[rows["method"].str.startswith("FedMD")].to_dict("records"):
            name = f"row {r['dataset']} {r['method']} k={r['k']}"
            if not pd.isna(r.get("matched_k")):  # FedMD-LDP: one row per NFDP row it is calibrated to
                name += f" (at NFDP k={int(r['matched_k'])}'s epsilon)"
            keys = ("scenario", "method", "k", "answer", "sampling", "epsilon")
            problems += _row_against_result(table2, r, results, keys, name, repeats)
    rknn = root / "table_rknn.csv"
    if rknn.is_file():
        for r in read_csv(rknn).to_dict("records"):
            name = f"row {r['scenario']} {r['encoder']} s={r['s']} {r['mechanism']}"
            keys = ("scenario", "encoder", "s", "k", "mechanism", "epsilon")
            problems += _row_against_result(rknn, r, results, keys, name)
    compare = root / "compare.csv"
    if compare.is_file() and len(read_csv(compare)) != len(results):
        problems.append((compare, f"{len(read_csv(compare))} rows, but {len(results)} result.json files"))
    ledger = root / "privacy_ledger.csv"
    if ledger.is_file():
        releases = (
            [p for p in root.glob("**/*.ledger.json")]
            + list(root.glob("**/releases.json"))
            + list(root.glob("**/*.guarantee.json"))
        )
        expected = sum(
            len(json.loads(p.read_text()))
            for p in releases
            if _check_file(p) is None and not _audited(p) and not _ablation_only(p)
        )
        if len(read_csv(ledger)) != expected:
            problems.append((ledger, f"{len(read_csv(ledger))} rows, but the release records hold {expected}"))
    return problems


def _missing(root: Path, record: dict | None) -> list[tuple[Path, str]]:
    """Outputs the folder's preset should have (its run record's ``expected``) that do not exist."""
    if record is None:
        return []
    workdir = workdir_of(root, record)
    return [(workdir / p, "missing") for p in record["expected"] if not (workdir / p).exists()]


def verify(results_dir) -> list[tuple[Path, str]]:
    """(file, what is wrong) for every problem under ``results_dir``: missing, unreadable, inconsistent."""
    root = Path(results_dir)
    problems = _missing(root, read_run_record(root))
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if path.is_file() and not set(rel[:1]) & set(SKIP) and not any(part.startswith(".") for part in rel):
            why = _check_file(path)
            if why:
                problems.append((path, why))
    return problems + _consistency(root)


def _checkpoint(path) -> bool:
    """A job's round checkpoint (``resume.pt``, ``<model>.resume.pt``): a parameter of its job, not an output."""
    return Path(path).name.endswith("resume.pt")


def _looks_like_results(root: Path) -> bool:
    """A results folder made before run records existed: a pipelib layout (ingested data, partitions)."""
    return (root / "data").is_dir() and (root / "partitions").is_dir()


def report(results_dir) -> tuple[str, int]:
    """The text `pipelib verify` prints, and its exit status (0: everything is fine; 1: problems; 2: not a
    results folder)."""
    root = Path(results_dir)
    if not root.is_dir():
        return f"{root}: no such results folder", 2
    record = read_run_record(root)
    if record is None and not _looks_like_results(root):
        return (
            f"{root}: not a pipelib results folder (no .pipelib/run.json, which every run writes before its "
            "first job, and no data/ and partitions/); give the folder a run wrote, e.g. results/reduced",
            2,
        )
    files = sum(1 for p in root.rglob("*") if p.is_file())
    problems = verify(root)
    note = "" if record else " (no run record: missing outputs cannot be listed; run any target once to write one)"
    if not problems:
        expected = f", all {len(record['expected'])} expected outputs present" if record else ""
        return f"{root}: {files} files checked, all readable and consistent{expected}{note}", 0
    lines = [f"{root}: {plural(len(problems), 'problem')} in {plural(files, 'file')}{note}:"]
    workdir = workdir_of(root, record) if record else None
    for path, why in problems:
        shown = os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd().resolve()) else path
        if _checkpoint(path):  # no rule builds it: without it the job starts from its first round
            lines += [f"  {shown}: {why}", f"    remove: {shlex.join(['rm', str(shown)])}"]
            continue
        hint = rebuild_command(Path(path).resolve(), record, workdir, force=why != "missing")
        lines += [f"  {shown}: {why}", f"    {'build' if why == 'missing' else 'rebuild'}: {hint}"]
    # one Snakemake call for all (its start and DAG take most of a small rebuild)
    outputs = [(Path(path).resolve(), why) for path, why in problems if not _checkpoint(path)]
    paths = list(dict.fromkeys(path for path, _ in outputs))
    if len(paths) > 1:
        damaged = any(why != "missing" for _, why in outputs)
        lines.append(f"  all at once: {rebuild_command(paths, record, workdir, force=damaged)}")
    return "\n".join(lines), 1
