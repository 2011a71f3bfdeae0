#!/usr/bin/env bash
# Stop the daemons that .ci/slurm-up.sh started, by the PIDs it recorded (slurmd, slurmctld,
# then munged). Safe to call when nothing runs: a missing PID file or a gone process is fine.
set -uo pipefail

state="${PATHBENCH_SLURM_DIR:-/tmp/pathbench-slurm}"
pidfile="$state/pids"
[[ -f "$pidfile" ]] || exit 0

alive() { kill -0 "$1" 2>/dev/null; }

# Stop in reverse start order: the node daemon, the controller, then authentication.
for name in slurmd slurmctld munged; do
    pid="$(awk -v n="$name" '$1 == n {print $2}' "$pidfile")"
    [[ -n "$pid" ]] || continue
    alive "$pid" || continue
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do
        alive "$pid" || break
        sleep 0.2
    done
    if alive "$pid"; then
        echo "slurm-down: $name ($pid) ignored SIGTERM; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null
    fi
done
rm -f "$pidfile"
