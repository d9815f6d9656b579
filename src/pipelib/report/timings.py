"""Wall time per stage from a run's per-job benchmark files (``<results_dir>/benchmarks/<rule>/...tsv``,
written by Snakemake's ``benchmark:``): jobs, summed and longest wall time, peak memory per rule.

``pipelib timings results/reduced`` prints it as Markdown (a generated table, never typed).  Summed
job time is not elapsed time: two jobs share the 2 cores of the reference machine, so a rule's
elapsed share is about half its sum when it ran two at a time.  The elapsed time of the selected jobs is
measured too: the time during which at least one of them ran, each job's interval ending at its benchmark
file's modification time (Snakemake writes it when the job ends) and starting its wall seconds earlier.  A
copied or re-touched results folder loses those times; the summed column does not depend on them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def jobs(results_dir, rules=None, since: float | None = None) -> pd.DataFrame:
    """One row per benchmark file (a job's last run): its rule (the first folder under ``benchmarks/``, or
    the file's stem for rules with one job), wall seconds, peak resident memory (MB), start and end in
    seconds since the epoch (see the module docstring); with ``since``, only the jobs that started then or
    later (a run's own jobs, when older ones of the same rules are in the folder)."""
    root = Path(results_dir) / "benchmarks"
    rows = []
    for path in sorted(root.rglob("*.tsv")):
        rel = path.relative_to(root)
        rule = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if rules and rule not in rules:
            continue
        t = pd.read_csv(path, sep="\t")
        seconds, end = float(t["s"].iloc[-1]), path.stat().st_mtime
        if since is None or end - seconds >= since:
            rows.append({"rule": rule, "seconds": seconds, "max_rss": float(t["max_rss"].iloc[-1]),
                         "start": end - seconds, "end": end})  # fmt: skip
    if not rows:
        raise ValueError(
            f"no benchmark files under {root}"
            + (f" for rules {', '.join(rules)}" if rules else "")
            + (" of jobs started since then" if since is not None else "")
        )
    return pd.DataFrame(rows)


def stage_times(results_dir, rules=None, since: float | None = None) -> pd.DataFrame:
    """One row per rule: jobs, total and longest wall seconds, peak resident memory (MB)."""
    return _per_rule(jobs(results_dir, rules, since))


def _per_rule(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.groupby("rule").agg(
        jobs=("seconds", "size"),
        total_s=("seconds", "sum"),
        longest_s=("seconds", "max"),
        peak_rss_mb=("max_rss", "max"),
    )
    return out.sort_values("total_s", ascending=False).reset_index()


def busy_seconds(intervals) -> float:
    """Length of the union of (start, end) intervals: the time during which at least one job ran."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def _duration(seconds: float) -> str:
    return (
        f"{seconds:.0f} s"
        if seconds < 90
        else f"{seconds / 60:.1f} min"
        if seconds < 5400
        else f"{seconds / 3600:.2f} h"
    )


def markdown(results_dir, rules=None, since: float | None = None) -> str:
    frame = jobs(results_dir, rules, since)
    t = _per_rule(frame)
    lines = [
        "| stage (rule) | jobs | job time, summed | longest job | peak memory |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| `{r.rule}` | {r.jobs} | {_duration(r.total_s)} | {_duration(r.longest_s)} | {r.peak_rss_mb:,.0f} MB |"
        for r in t.itertuples()
    ]
    lines.append(f"| all | {t['jobs'].sum()} | {_duration(t['total_s'].sum())} | | |")
    spans = list(zip(frame["start"], frame["end"]))
    first, last = frame["start"].min(), frame["end"].max()
    lines += [
        "",
        f"Elapsed: {_duration(busy_seconds(spans))} with at least one of these jobs running, "
        f"{_duration(last - first)} from the first start to the last end (each job's last run; its end is its "
        "benchmark file's modification time).",
    ]
    return "\n".join(lines)
