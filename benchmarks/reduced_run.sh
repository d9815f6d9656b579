#!/usr/bin/env bash
# The full reduced run (rule all of presets/reduced.yaml) on a fresh clone, in resumable parts, then its
# finishing steps.  About 17 h of job time (docs/stage_times.md), an estimated 9-10 h on 2 CPU cores, so
# it usually spans several sessions: run this again with the same CLONE to resume (finished jobs are kept;
# killed LDP-FL and FedMD jobs resume from their checkpoints).  Never pull new commits into CLONE while
# parts remain: a change to a rule's code closure makes its finished jobs stale.
#
#   benchmarks/reduced_run.sh CLONE [DATA_ROOT]        # DATA_ROOT default: ../shared/data beside this repo
#   PRIORITY="docs/reproduction/reduced/paper004.md ..." benchmarks/reduced_run.sh CLONE   # these first
#   CORES=1 benchmarks/reduced_run.sh CLONE            # one core (default 2): beside another long job
#   TARGETS="docs/reproduction/reduced/fedmd_ablation.md" benchmarks/reduced_run.sh CLONE  # a command of its own
#                                    # (not in rule all), in resumable parts the same way; no finishing steps
#
# Writes beside CLONE: CLONE.times (one line per part: start, end, commit, exit status), CLONE.partN.log
# (Snakemake's console of part N) and, once rule all has finished, CLONE.finish/ (the dry run, `pipelib
# verify`, `pipelib timings`, the HTML report's console).  The generated pages are then in
# CLONE/docs/reproduction/reduced/ and README.md's headline blocks are synced in CLONE: copy them into the
# working repository (docs/running.md, "The whole reduced preset, measured", says what to report).
# The body is one block that bash reads whole before running it: editing this file while a part runs
# (hours) cannot change what that part does next (bash otherwise reads a script as it goes).
{
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
clone=${1:?usage: benchmarks/reduced_run.sh CLONE [DATA_ROOT]}
data_root=${2:-$(cd "$repo/.." && pwd)/shared/data}
venv=${VENV:-$repo/.venv}
[ -x "$venv/bin/snakemake" ] || { echo "no Snakemake at $venv/bin/snakemake (set VENV)" >&2; exit 2; }
[ -d "$data_root" ] || { echo "no data root at $data_root" >&2; exit 2; }
if [ ! -d "$clone/.git" ]; then
    git clone -q "$repo" "$clone" || exit 2
    echo "fresh clone $(git -C "$clone" rev-parse --short HEAD) at $(date -u +%FT%TZ)" >> "$clone.times"
fi
cd "$clone" || exit 2
export PYTHONPATH=$clone/src PYTHONUNBUFFERED=1
# max_cpu_hours=0: this script is the long run on purpose (on one core the planner's estimate passes 12 h)
smk=("$venv/bin/snakemake" --configfile presets/reduced.yaml --config "data_root=$data_root" max_cpu_hours=0)
# a part stopped a moment ago may still be exiting: wait (up to 10 min) for its run lock rather than fail at once
lock=results/reduced/.pipelib-run.lock
mkdir -p results/reduced
flock -w 600 "$lock" true || { echo "results/reduced is still held: $(cat "$lock")" >&2; exit 2; }
"${smk[@]}" --unlock --cores 1 > /dev/null 2>&1
n=$(( $(ls "$clone".part*.log 2>/dev/null | wc -l) + 1 ))
echo "part $n start $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) cores ${CORES:-2} priority: ${PRIORITY:-none}" \
    "targets: ${TARGETS:-rule all}" >> "$clone.times"
# stopped (kill -TERM -<pgid>: the way to free the cores, docs/development.md): the part's end is still written,
# once Snakemake has stopped its jobs (bash runs the trap when its foreground child has exited)
trap 'echo "part $n end $(date -u +%FT%TZ) stopped by a signal" >> "$clone.times"; exit 143' TERM INT
# --max-jobs-per-timespan: the scheduler's passes a minute apart, not a second (docs/running.md, "Where the
# time went": its default kept Snakemake at 44 % of a core on this DAG)
# TARGETS right after the program: --configfile, --config and --prioritize take every word that follows them
# shellcheck disable=SC2086  # PRIORITY and TARGETS are lists of targets
"${smk[0]}" ${TARGETS:-} "${smk[@]:1}" --cores "${CORES:-2}" --keep-going --rerun-incomplete \
    --max-jobs-per-timespan 6000/1m ${PRIORITY:+--prioritize $PRIORITY} \
    > "$clone.part$n.log" 2>&1
rc=$?
echo "part $n end $(date -u +%FT%TZ) rc $rc" >> "$clone.times"
[ $rc -eq 0 ] || exit $rc
[ -z "${TARGETS:-}" ] || exit 0

out=$clone.finish
mkdir -p "$out"
"${smk[@]}" -n --cores 1 > "$out/dry_run.txt" 2>&1
"$venv/bin/pipelib" verify results/reduced > "$out/verify.txt" 2>&1
"$venv/bin/pipelib" timings results/reduced > "$out/timings.md" 2>&1
"${smk[@]}" --report results/reduced/report.html > "$out/report.txt" 2>&1
"$venv/bin/pipelib" sync-readme > "$out/sync_readme.txt" 2>&1
echo "finished $(date -u +%FT%TZ): $out" >> "$clone.times"
exit 0
}
