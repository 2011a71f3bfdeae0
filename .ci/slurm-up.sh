#!/usr/bin/env bash
# Start a real single-node SLURM on this machine for the tests marked `slurm`.
#
# Installs Debian's slurm-wlm and munge, writes /etc/slurm/slurm.conf for this host (no cgroups,
# no accounting database), starts munged, slurmctld and slurmd, waits until `sinfo` shows the
# node idle and writes the daemons' PIDs to $PATHBENCH_SLURM_DIR/pids (one "name pid" a line),
# which .ci/slurm-down.sh reads. Meant for CI and throwaway machines: it overwrites
# /etc/slurm/slurm.conf and runs the controller with a fresh state (slurmctld -c).
#
# The config must sit at the default path: snakemake-executor-plugin-slurm's jobstep drops every
# SLURM_* variable (SLURM_CONF too) before calling srun inside a job.
#
# Jobs run as root here. SLURM accepts them: root jobs are refused only with
# DisableRootJobs=YES, whose default is NO (it is spelled out below).
set -euo pipefail

state="${PATHBENCH_SLURM_DIR:-/tmp/pathbench-slurm}"
pidfile="$state/pids"
here="$(cd "$(dirname "$0")" && pwd)"

log() { echo "slurm-up: $*" >&2; }

marker="Written by pathbench-flow's .ci/slurm-up.sh"
if [[ -f /etc/slurm/slurm.conf ]] && ! grep -qF "$marker" /etc/slurm/slurm.conf \
        && [[ "${PATHBENCH_SLURM_FORCE:-}" != 1 ]]; then
    log "/etc/slurm/slurm.conf exists and was not written by this script; not touching it"
    log "(set PATHBENCH_SLURM_FORCE=1 to overwrite it on a throwaway machine)"
    exit 1
fi

# A previous instance started by this script is stopped first, so the script can be rerun.
if [[ -f "$pidfile" ]]; then
    bash "$here/slurm-down.sh"
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
        || ! command -v munged >/dev/null; then
    log "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq slurm-wlm munge >/dev/null
fi

mkdir -p "$state"
: >"$pidfile"

# --- munge ----------------------------------------------------------------------------------
# Debian's package creates the key on install; create one if it is missing.
if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge

# setpriv execs munged as the munge user, so $! is munged's own PID.
setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground \
    >"$state/munged.out" 2>&1 </dev/null &
echo "munged $!" >>"$pidfile"
for _ in $(seq 50); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.2
done
if ! munge -n </dev/null | unmunge >/dev/null; then
    log "munged does not answer; see $state/munged.out and /var/log/munge/munged.log"
    exit 1
fi

# --- slurm.conf -----------------------------------------------------------------------------
host="$(hostname -s)"
# `slurmd -C` prints this machine's node line; keep the hardware fields, drop NodeName/UpTime.
hardware="$(slurmd -C | head -n 1 | tr ' ' '\n' \
    | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore|RealMemory)=' \
    | tr '\n' ' ')"
if [[ "$hardware" != *CPUs=* || "$hardware" != *RealMemory=* ]]; then
    log "could not read CPUs and memory from 'slurmd -C'"
    exit 1
fi

install -d -m 0755 /etc/slurm
install -d -o slurm -g slurm -m 0755 /var/lib/slurm/slurmctld /var/log/slurm
install -d -m 0755 /var/lib/slurm/slurmd /run/slurm
cat >/etc/slurm/slurm.conf <<EOF
# Written by pathbench-flow's .ci/slurm-up.sh: one node, this machine; no cgroups, no accounting.
ClusterName=pathbench-ci
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
# No cgroups: track job processes through /proc and bind no tasks.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No accounting database: sacct has nothing to ask, so clients must use squeue for job status.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
# Finished jobs stay visible to squeue for an hour: status checks based on squeue (the plugin's
# squeue mode, profiles/cluster-generic/status.py) must see a job after it ended, even when
# Snakemake's status loop falls behind by minutes.
MinJobAge=3600
ReturnToService=2
DisableRootJobs=NO
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=${host} NodeAddr=127.0.0.1 ${hardware}State=UNKNOWN
PartitionName=ci Nodes=${host} Default=YES MaxTime=INFINITE State=UP
EOF
log "node: ${host} ${hardware}"

# --- daemons --------------------------------------------------------------------------------
# Foreground mode (-D) keeps each daemon the direct child, so $! is its PID.
slurmctld -D -c >"$state/slurmctld.out" 2>&1 </dev/null &
echo "slurmctld $!" >>"$pidfile"
for _ in $(seq 100); do
    scontrol ping 2>/dev/null | grep -q UP && break
    sleep 0.2
done
slurmd -D >"$state/slurmd.out" 2>&1 </dev/null &
echo "slurmd $!" >>"$pidfile"

for _ in $(seq 120); do
    if [[ "$(sinfo -h -N -n "$host" -o '%t' 2>/dev/null)" == idle ]]; then
        sinfo
        log "SLURM is up; PIDs in $pidfile"
        exit 0
    fi
    sleep 0.5
done
log "node ${host} did not become idle within 60 s:"
sinfo -N -l >&2 || true
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log "$state"/*.out >&2 || true
exit 1
