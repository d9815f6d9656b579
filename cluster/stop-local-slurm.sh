#!/usr/bin/env bash
# Stop the single-node SLURM cluster that cluster/start-local-slurm.sh started: cancel its jobs, stop
# slurmd and slurmctld, and munged if the start script started it.  Idempotent (nothing running: exit 0).
#
#   sudo cluster/stop-local-slurm.sh            # stop; keep config and state (a restart is quick)
#   sudo cluster/stop-local-slurm.sh --purge    # also remove its slurm.conf/gres.conf, state and logs
#
# Never touches a SLURM it did not set up (a slurm.conf without the start script's marker).
# Exit status: 0 stopped (or nothing to stop); 2 not root; 5 a foreign SLURM configuration (left alone).
set -euo pipefail

CONF=/etc/slurm/slurm.conf
GRES_CONF=/etc/slurm/gres.conf
MARKER="# pipelib-local-slurm"
STATE=/run/pipelib-slurm
purge= keep_munge=
for arg in "$@"; do
    case $arg in
        --purge) purge=1 ;;
        --keep-munge) keep_munge=1 ;;   # used by the start script when it restarts SLURM
        *) echo "usage: $0 [--purge]" >&2; exit 64 ;;
    esac
done

log() { echo "stop-local-slurm: $*" >&2; }
pids_of() { local d; for d in /proc/[0-9]*; do [[ $(cat "$d/comm" 2>/dev/null) == "$1" ]] && echo "${d#/proc/}"; done; return 0; }
alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }
stop_pidfile() {  # TERM the daemon of a pid file, KILL it after 15 s
    local pidfile=$1 name=$2 pid
    alive "$pidfile" || return 0
    pid=$(cat "$pidfile")
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 75); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
    log "$name did not exit: killing it"
    kill -KILL "$pid" 2>/dev/null || true
}

[[ $(id -u) -eq 0 ]] || { log "must run as root"; exit 2; }
if [[ -e $CONF ]] && ! grep -q "^$MARKER" "$CONF"; then
    log "$CONF was not written by cluster/start-local-slurm.sh: leaving this machine's SLURM alone"
    exit 5
fi

if [[ -e $CONF ]] && alive /run/slurm/slurmctld.pid; then
    jobs=$(squeue -h -o '%i' 2>/dev/null || true)
    if [[ -n $jobs ]]; then
        log "cancelling jobs: $(echo $jobs)"
        # shellcheck disable=SC2086
        scancel $jobs 2>/dev/null || true
        for _ in $(seq 50); do
            [[ -z $(squeue -h -t PENDING,RUNNING,COMPLETING,CONFIGURING -o '%i' 2>/dev/null) ]] && break
            sleep 0.2
        done
    fi
fi
stop_pidfile /run/slurm/slurmd.pid slurmd
stop_pidfile /run/slurm/slurmctld.pid slurmctld
# left-over job steps (this machine's slurm.conf is ours, so they are ours)
for pid in $(pids_of slurmstepd); do kill -KILL "$pid" 2>/dev/null || true; done

if [[ -z $keep_munge && -e $STATE/munged ]]; then
    stop_pidfile /run/munge/munged.pid munged
    rm -f "$STATE/munged"
fi

if [[ -n $purge ]]; then
    log "purging configuration, state and logs"
    rm -f "$CONF"
    [[ -e $GRES_CONF ]] && grep -q "^$MARKER" "$GRES_CONF" && rm -f "$GRES_CONF"
    rm -rf /var/lib/slurm/pipelib-slurmctld /var/lib/slurm/pipelib-slurmd "$STATE"
    rm -f /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log
fi
log "stopped"
