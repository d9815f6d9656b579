"""How many SLURM submissions a run would make: a dry run through a SLURM profile, counted.

Each group job (Snakemake's ``group`` / ``group-components``) is one ``sbatch``; so is each job outside a
group that is not a local rule.  Prints the total and the rules that make the most submissions:

    .venv/bin/python benchmarks/slurm_submissions.py --configfile presets/reduced.yaml
    .venv/bin/python benchmarks/slurm_submissions.py --profile my-profile results/table2.csv

Needs the SLURM executor plugin (a dependency), not a cluster: a dry run submits nothing.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# Run Snakemake in a child process that first prints the workflow's local rules (a dry run prints every
# job as `rule`, local or not): Workflow.check_localrules runs once, after every rule file is read.
CHILD = """
import sys
import snakemake.api  # noqa: F401  (imports snakemake.workflow in the order it expects)
from snakemake.workflow import Workflow
check = Workflow.check_localrules
def report(self):
    print("PIPELIB_LOCALRULES:" + ",".join(sorted(self._localrules)), file=sys.stderr)
    return check(self)
Workflow.check_localrules = report
from snakemake.cli import main
sys.argv = ["snakemake", *sys.argv[1:]]
main()
"""


def local_rules(stderr: str) -> set[str]:
    found = re.findall(r"^PIPELIB_LOCALRULES:(.*)$", stderr, flags=re.M)
    return set(found[-1].split(",")) - {""} if found else set()


def count(report: str, local: set[str] = frozenset()) -> dict:
    """Submissions of a dry run's report: group jobs by group, ungrouped jobs of rules not in ``local`` by
    rule, local jobs (those of ``local`` outside a group, which Snakemake runs itself)."""
    groups = collections.Counter(re.findall(r"\] Group job (\S+) \(jobs", report))
    top = re.findall(r"^(rule|localrule) (\w+):", report, flags=re.M)
    # the target rule `all` has no command: Snakemake marks it done without a submission
    is_local = [(kind == "localrule" or rule in local, rule) for kind, rule in top if rule != "all"]
    ungrouped = collections.Counter(rule for on_host, rule in is_local if not on_host)
    grouped = collections.Counter(re.findall(r"^ {4}(?:local)?rule (\w+):", report, flags=re.M))
    return {
        "submissions": sum(groups.values()) + sum(ungrouped.values()),
        "group_jobs": dict(groups),
        "ungrouped": dict(ungrouped),
        "local": sum(on_host for on_host, _ in is_local),
        "jobs_in_groups": sum(grouped.values()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", help="targets (default: the workflow's default target)")
    ap.add_argument("--profile", default=str(ROOT / "profiles" / "slurm"), help="a SLURM workflow profile")
    ap.add_argument("--configfile", help="a preset (default: the paper preset, config.yaml alone)")
    ap.add_argument("--top", type=int, default=10, help="rules to list (default 10)")
    args = ap.parse_args()
    cmd = [sys.executable, "-c", CHILD, "-n", *args.targets, "--workflow-profile", args.profile]
    if args.configfile:
        cmd += ["--configfile", args.configfile]
    else:
        cmd += ["--config", "max_cpu_hours=0"]  # the paper preset's dry run on a machine without a GPU
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"the dry run failed ({out.returncode}):\n{(out.stdout + out.stderr)[-3000:]}")
    c = count(out.stdout, local_rules(out.stderr))
    n_groups, single = sum(c["group_jobs"].values()), sum(c["ungrouped"].values())
    print(f"{c['submissions']:,} SLURM submissions: {n_groups:,} group jobs ({c['jobs_in_groups']:,} jobs) and")
    print(f"{single:,} single jobs; {c['local']:,} local jobs (run by Snakemake itself)")
    for rule, n in collections.Counter(c["ungrouped"]).most_common(args.top):
        print(f"  {rule:32s} {n:6,d}")
    for group, n in sorted(c["group_jobs"].items()):
        print(f"  group {group:26s} {n:6,d}")


if __name__ == "__main__":
    main()
