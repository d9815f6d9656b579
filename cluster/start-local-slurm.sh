#!/usr/bin/env bash
# Start a single-node SLURM cluster on this machine from Debian's packages (munge, slurmctld, slurmd,
# slurm-client), for tests and CI, and wait until its node is idle.  Idempotent: a cluster this script
# already started is left running (restarted only if its configuration changed).  Needs root; needs no
# systemd (the daemons are started directly) and no accounting database (no slurmdbd).
#
#   sudo cluster/start-local-slurm.sh            # install if needed, configure, start, wait for the node
#   sudo cluster/stop-local-slurm.sh [--purge]   # the reverse
#
# Writes /etc/slurm/slurm.conf from cluster/slurm.conf.in (and gres.conf when GPUs are present), but never
# overwrites a slurm.conf it did not write, and never touches SLURM daemons it did not start.
# Exit status: 0 node up; 2 not root; 3 packages missing and cannot be installed; 4 the daemons did not
# come up (their log tails are printed); 5 this machine has a SLURM set up by someone else (left alone).
# Environment: PIPELIB_SLURM_TIMEOUT (seconds to wait for the node, default 90).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONF=/etc/slurm/slurm.conf
GRES_CONF=/etc/slurm/gres.conf
MARKER="# pipelib-local-slurm"
STATE=/run/pipelib-slurm          # records what this script started (munged)
TIMEOUT=${PIPELIB_SLURM_TIMEOUT:-90}
PACKAGES=(munge slurmctld slurmd slurm-client)

log() { echo "start-local-slurm: $*" >&2; }
die() { local code=$1; shift; log "$*"; exit "$code"; }
alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }   # pid file -> running?
munge_ok() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }
pids_of() { local d; for d in /proc/[0-9]*; do [[ $(cat "$d/comm" 2>/dev/null) == "$1" ]] && echo "${d#/proc/}"; done; return 0; }
node_state() { sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | head -1; }
show_logs() {
    for f in /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log /var/log/munge/munged.log; do
        [[ -f $f ]] && { echo "---- tail $f" >&2; tail -n 20 "$f" >&2; }
    done
    return 0
}

[[ $(id -u) -eq 0 ]] || die 2 "must run as root (installs packages, starts daemons); skipping"

# ------------------------------------------------------------------------------------- packages
have_all() { [[ -x /usr/sbin/slurmctld && -x /usr/sbin/slurmd && -x /usr/sbin/munged ]] \
             && command -v sbatch >/dev/null && command -v munge >/dev/null; }
if ! have_all; then
    command -v apt-get >/dev/null || die 3 "SLURM is not installed and there is no apt-get to install ${PACKAGES[*]}"
    log "installing ${PACKAGES[*]} (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    # keep the packages' maintainer scripts from starting daemons with their default configuration
    policy_added=
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && policy_added=1
    fi
    apt_install() { apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends "${PACKAGES[@]}" >/tmp/pipelib-slurm-apt.log 2>&1; }
    ok=1
    apt_install || { apt-get update -q -o DPkg::Lock::Timeout=300 >>/tmp/pipelib-slurm-apt.log 2>&1 && apt_install; } || ok=
    [[ -n $policy_added ]] && rm -f /usr/sbin/policy-rc.d
    if [[ -z $ok ]] || ! have_all; then
        tail -n 15 /tmp/pipelib-slurm-apt.log >&2 || true
        die 3 "could not install ${PACKAGES[*]} with apt-get (see /tmp/pipelib-slurm-apt.log)"
    fi
fi
log "$(slurmctld -V)"

# ------------------------------------------------------------------------------- configuration
if [[ -e $CONF ]] && ! grep -q "^$MARKER" "$CONF"; then
    die 5 "$CONF exists and was not written by this script: this machine has its own SLURM; leaving it alone"
fi
for daemon in slurmctld slurmd; do
    if [[ -n $(pids_of "$daemon") ]] && ! alive "/run/slurm/$daemon.pid"; then
        die 5 "a $daemon not started by this script is running; leaving it alone"
    fi
done

NODE=$(hostname -s)
# this machine's CPUs, sockets, cores, threads and memory as slurmd sees them (a mismatch drains the node)
NODE_HW=$(slurmd -C 2>/dev/null | grep '^NodeName=' | head -1 || true)
[[ -n $NODE_HW ]] || die 4 "slurmd -C printed no NodeName line"
NODE_HW=$(sed "s/^NodeName=[^ ]*/NodeName=$NODE/" <<<"$NODE_HW")
shopt -s nullglob
gpus=(/dev/nvidia[0-9]*)
shopt -u nullglob
GRES= GRES_TYPES=
if (( ${#gpus[@]} )); then
    GRES="Gres=gpu:${#gpus[@]}" GRES_TYPES="GresTypes=gpu"
fi

new=$(mktemp)
sed -e "s|@NODE@|$NODE|g" -e "s|@NODE_HW@|$NODE_HW|" -e "s|@GRES@|$GRES|" -e "s|@GRES_TYPES@|$GRES_TYPES|" \
    "$HERE/slurm.conf.in" >"$new"
mkdir -p /etc/slurm /var/lib/slurm/pipelib-slurmctld /var/lib/slurm/pipelib-slurmd /var/log/slurm /run/slurm "$STATE"
changed=
if ! cmp -s "$new" "$CONF" 2>/dev/null; then
    install -m 644 "$new" "$CONF" && changed=1
    log "wrote $CONF ($NODE_HW${GRES:+ $GRES})"
fi
rm -f "$new"
if (( ${#gpus[@]} )); then
    { echo "$MARKER"; printf 'NodeName=%s Name=gpu File=%s\n' "$NODE" "${gpus[@]}"; } >"$GRES_CONF.new"
    cmp -s "$GRES_CONF.new" "$GRES_CONF" 2>/dev/null || { mv "$GRES_CONF.new" "$GRES_CONF"; changed=1; }
    rm -f "$GRES_CONF.new"
fi
if [[ -n $changed ]] && { alive /run/slurm/slurmctld.pid || alive /run/slurm/slurmd.pid; }; then
    log "configuration changed: restarting the daemons"
    "$HERE/stop-local-slurm.sh" --keep-munge
fi

# ------------------------------------------------------------------------------------- munge
if ! munge_ok; then
    if [[ ! -s /etc/munge/munge.key ]]; then
        log "creating /etc/munge/munge.key"
        mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null \
            || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    chown munge:munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
    chmod 400 /etc/munge/munge.key
    chmod 700 /etc/munge /var/lib/munge /var/log/munge
    chmod 755 /run/munge
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged || { show_logs; die 4 "munged did not start"; }
    touch "$STATE/munged"
    for _ in $(seq 50); do munge_ok && break; sleep 0.2; done
    munge_ok || { show_logs; die 4 "munge does not work"; }
fi

# ------------------------------------------------------------------------------- slurm daemons
if ! alive /run/slurm/slurmctld.pid; then
    log "starting slurmctld"
    /usr/sbin/slurmctld || { show_logs; die 4 "slurmctld did not start"; }
fi
for _ in $(seq 50); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
scontrol ping 2>/dev/null | grep -q UP || { show_logs; die 4 "slurmctld does not answer"; }
if ! alive /run/slurm/slurmd.pid; then
    log "starting slurmd"
    /usr/sbin/slurmd || { show_logs; die 4 "slurmd did not start"; }
fi

# ------------------------------------------------------------------------ wait for an idle node
deadline=$((SECONDS + TIMEOUT))
state=
while (( SECONDS < deadline )); do
    state=$(node_state)
    case $state in
        idle|mixed|allocated|completing) log "node $NODE is $state; partition debug is up"; exit 0 ;;
        down*|drain*|drained*)  # e.g. left down by an earlier run: bring it back
            scontrol update NodeName="$NODE" State=RESUME 2>/dev/null || true ;;
    esac
    sleep 1
done
show_logs
scontrol show node "$NODE" >&2 2>/dev/null || true
die 4 "node $NODE did not become idle within ${TIMEOUT}s (state: ${state:-unknown})"
