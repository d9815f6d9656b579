"""Per-stage job time of the reduced preset at two code versions, from a sample of its jobs (issue 32 item 5),
and the whole reduced run's summed job time estimated from it.

``run`` builds a sample of the reduced preset's jobs (a few per rule, ``--targets``: one output per line)
at each code version in its own git worktree under ``--work``: the finished reduced results of this
checkout are hard-linked in (so jobs whose inputs exist run alone), the sample's targets are forced, and
the jobs upstream of them that do not exist yet run too.  Snakemake runs each version as the reduced run
does (``--cores 2``, one thread per job, two jobs at a time) and writes a benchmark file per job.  Run
the versions one after the other on an otherwise idle machine.

``report`` reads those benchmark files (``pipelib timings``' reader) and prints, per rule: its jobs in the
whole reduced run, the sampled jobs, their mean job time at each version and the ratio, and the whole
run's summed job time estimated at each version.  The estimate scales each rule's sample to the whole
run: a rule with planned training work (``pipelib.plan.job_work``) by the sample's measured seconds per
planned second times the rule's planned seconds over all its jobs; any other rule by its sampled mean
times its job count; a rule without a sampled job at the median of the sampled rules that train nothing.

    .venv/bin/python benchmarks/stage_times.py run --work /tmp/st --arm before=f9d224b --arm after=HEAD
    .venv/bin/python benchmarks/stage_times.py report --work /tmp/st --arm before --arm after
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pipelib import plan
from pipelib.boundary import parse_dry_run
from pipelib.config import load, scenarios, validate
from pipelib.io import read_json
from pipelib.report.timings import stage_times
from pipelib.stats import accuracy_interval
from pipelib.train import loop

ROOT = Path(__file__).resolve().parents[1]
TARGETS = Path(__file__).with_name("stage_sample.txt")
START = re.compile(r"^pipelib: start (\w+)((?: \w+=\S+)*) \(log: ")


def snakemake() -> str:
    return str(Path(sys.executable).with_name("snakemake"))


def setup(work: Path, arm: str, commit: str, results: Path) -> Path:
    """A worktree of ``commit`` at ``work/arm`` holding hard links to ``results`` (no benchmarks, no logs)."""
    tree = work / arm
    if not tree.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-f", "--detach", str(tree), commit], check=True)
    dest = tree / "results" / results.name
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-al", str(results), str(dest)], check=True)
        for name in ("benchmarks", "logs"):
            subprocess.run(["rm", "-rf", str(dest / name)], check=True)
    shared = work / "shared"  # the presets' data_root (../shared/data) seen from the worktree
    if not shared.exists():
        shared.symlink_to(ROOT.parent / "shared")
    return tree


def run(tree: Path, targets: list[str], overlay: str | None) -> float:
    """Build the forced sample in ``tree`` (its own code on its PYTHONPATH); wall seconds."""
    configs = [str(tree / "presets/reduced.yaml"), *([overlay] if overlay else [])]
    cmd = [snakemake(), "--cores", "2", "--force", *targets, "--configfile", *configs, "--rerun-triggers", "mtime"]
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    subprocess.run(["rm", "-rf", str(tree / "results" / "reduced" / "benchmarks")], check=True)  # this run's only
    t0 = time.time()
    with open(tree / "stage_times.log", "w") as log:
        subprocess.run(cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    return time.time() - t0


def started_jobs(log: Path) -> list[tuple[str, dict]]:
    """(rule, wildcards) of every job a run's console log says started."""
    jobs = []
    for line in log.read_text().splitlines():
        m = START.match(line)
        if m:
            jobs.append((m[1], dict(kv.split("=", 1) for kv in m[2].split())))
    return jobs


def reduced_jobs(tree: Path) -> list[tuple[str, dict]]:
    """(rule, wildcards) of every job of the reduced preset's ``rule all`` (a dry run in an empty folder)."""
    empty = tree.parent / "empty"
    empty.mkdir(exist_ok=True)
    cmd = [snakemake(), "-s", str(tree / "Snakefile"), "-d", str(empty), "-n", "--forceall"]
    cmd += ["--configfile", str(tree / "presets/reduced.yaml"), "--config", f"data_root={ROOT.parent / 'shared/data'}"]
    out = subprocess.run(
        cmd, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(tree / "src")}
    )
    return [(j.rule, j.wildcards) for j in parse_dry_run(out.stdout)]


def planned_seconds(jobs, config: dict, results_dir: str, throughput) -> dict:
    """Planned training seconds per rule of ``jobs`` (rules without planned work are left out)."""
    out: dict = {}
    for rule, wc in jobs:
        work = plan.job_work(rule, wc, config, results_dir)
        if work is not None and work.passes:
            seconds = sum(n / throughput(*key) for key, n in work.passes.items())  # (arch, shape, batch[, group])
            out[rule] = out.get(rule, 0.0) + seconds
    return out


def report(work: Path, arms: list[str], results: Path) -> str:
    config = validate(load(ROOT / "config.yaml", ROOT / "presets/reduced.yaml"))
    config = {**config, "scenarios": scenarios(config)}
    throughput = plan.Throughput(loop.pick_device("cpu"), config["fedmd"]["threads"])
    everything = reduced_jobs(work / arms[-1])
    counts: dict = {}
    for rule, _ in everything:
        counts[rule] = counts.get(rule, 0) + 1
    planned_all = planned_seconds(everything, config, str(results), throughput)
    per_arm = {}
    for arm in arms:
        tree = work / arm
        times = stage_times(tree / "results" / results.name).set_index("rule")
        planned = planned_seconds(started_jobs(tree / "stage_times.log"), config, str(results), throughput)
        light = [times.loc[r, "total_s"] / times.loc[r, "jobs"] for r in times.index if r not in planned_all]
        floor = statistics.median(light) if light else 0.0
        est, mean = {}, {}
        for rule, n in counts.items():
            if rule in times.index:
                mean[rule] = times.loc[rule, "total_s"] / times.loc[rule, "jobs"]
                if rule in planned_all and planned.get(rule):
                    est[rule] = times.loc[rule, "total_s"] / planned[rule] * planned_all[rule]
                else:
                    est[rule] = mean[rule] * n
            else:
                est[rule] = floor * n
        per_arm[arm] = (times, mean, est, floor)
    first, last = arms[0], arms[-1]
    head = "| stage (rule) | jobs in the run | sampled | " + " | ".join(f"mean job, {a}" for a in arms)
    head += f" | {last} / {first} | " + " | ".join(f"est. summed, {a}" for a in arms) + " |"
    lines = [head, "|" + "---|" * (4 + 2 * len(arms))]
    order = sorted(counts, key=lambda r: -per_arm[first][2][r])
    for rule in order:
        sampled = int(per_arm[last][0].loc[rule, "jobs"]) if rule in per_arm[last][0].index else 0
        means = [per_arm[a][1].get(rule) for a in arms]
        ratio = f"{means[-1] / means[0]:.2f}" if means[0] and means[-1] else "-"
        cells = [f"{m:.1f} s" if m is not None else "(not sampled)" for m in means]
        ests = [plan.duration(per_arm[a][2][rule]) for a in arms]
        lines.append(
            f"| `{rule}` | {counts[rule]} | {sampled} | "
            + " | ".join(cells)
            + f" | {ratio} | "
            + " | ".join(ests)
            + " |"
        )
    totals = [sum(per_arm[a][2].values()) for a in arms]
    lines.append(
        f"| all | {sum(counts.values())} | {int(per_arm[last][0]['jobs'].sum())} | "
        + " | ".join("" for _ in arms)
        + f" | {totals[-1] / totals[0]:.2f} | "
        + " | ".join(f"**{t / 3600:.2f} h**" for t in totals)
        + " |"
    )
    groups = {
        "stages with planned training work": [r for r in counts if r in planned_all],
        "the other stages (LDP-DL's teachers, and the jobs that train nothing)": [
            r for r in counts if r not in planned_all
        ],
    }
    lines += [
        "",
        "| stages | jobs | "
        + " | ".join(f"est. summed, {a}" for a in arms)
        + " | "
        + " | ".join(f"{a} / {first}" for a in arms[1:])
        + " |",
    ]
    lines.append("|---|---|" + "---|" * (2 * len(arms) - 1))
    for label, rules in groups.items():
        sums = [sum(per_arm[a][2][r] for r in rules) for a in arms]
        lines.append(
            f"| {label} | {sum(counts[r] for r in rules)} | "
            + " | ".join(f"{t / 3600:.2f} h" for t in sums)
            + " | "
            + " | ".join(f"{t / sums[0]:.2f}" for t in sums[1:])
            + " |"
        )
    floors = ", ".join(f"{a} {per_arm[a][3]:.2f} s" for a in arms)
    lines.append(f"\nUnsampled rules are counted at the median sampled job of a rule that trains nothing ({floors}).")
    return "\n".join(lines)


def accuracy_table(work: Path, arms: list[str], targets: list[str]) -> str:
    """The sampled training jobs' accuracies at each version, and the last against the first with the
    first's 95 % interval (Wilson, on its evaluation images): a precision change should stay inside it."""
    first, last = arms[0], arms[-1]
    lines = [
        "| result | " + " | ".join(arms) + f" | {last} - {first} | 95 % interval of {first} |",
        "|---|" + "---|" * (len(arms) + 2),
    ]
    for target in targets:
        if not target.endswith("result.json"):
            continue
        rows = [read_json(work / a / target) for a in arms]
        acc = [r["accuracy"] for r in rows]
        n = rows[0].get("test_n") or rows[0]["test_records"]  # the evaluation images
        lo, hi = accuracy_interval(acc[0], int(n))
        name = target.split("/", 2)[2].rsplit("/", 1)[0]
        lines.append(
            f"| {name} | "
            + " | ".join(f"{a:.4f}" for a in acc)
            + f" | {acc[-1] - acc[0]:+.4f} | [{lo:.3f}, {hi:.3f}] |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=["run", "report"])
    ap.add_argument("--work", type=Path, default=Path("/tmp/stage_times"), help="worktrees go here")
    ap.add_argument("--arm", action="append", required=True, help="run: NAME=COMMIT; report: NAME")
    ap.add_argument("--overlay", action="append", default=[], help="NAME=CONFIGFILE merged over the preset")
    ap.add_argument("--targets", type=Path, default=TARGETS, help="the sample: one reduced output per line")
    ap.add_argument("--results", type=Path, default=ROOT / "results/reduced", help="finished reduced results")
    args = ap.parse_args()
    targets = [t for t in args.targets.read_text().splitlines() if t.strip() and not t.startswith("#")]
    if args.action == "report":
        print(report(args.work, args.arm, args.results))
        print()
        print(accuracy_table(args.work, args.arm, targets))
        return
    overlays = dict(o.split("=", 1) for o in args.overlay)
    for spec in args.arm:
        name, commit = spec.split("=", 1)
        tree = setup(args.work, name, commit, args.results)
        print(f"{name} ({commit}): {run(tree, targets, overlays.get(name)):.0f} s wall", flush=True)


if __name__ == "__main__":
    main()
