#!/usr/bin/env bash
# A cluster for snakemake-executor-plugin-cluster-generic whose jobs share no file system with
# the Snakemake process that submits them, on one machine: each job runs in a private mount
# namespace (unshare -m, needs root) with an empty tmpfs mounted over every directory listed in
# ISOLATED_JOB_HIDE (colon-separated: the working directory, results, the datasets' original
# directories), so a job sees only what it stages itself from a storage plugin into its scratch
# (the tmpfs over the working directory, where it starts). tests/test_object_storage.py uses it.
#
#   isolated_job.sh submit JOBSCRIPT   start the job in the background; print its id
#   isolated_job.sh status ID          print running, success or failed
#   isolated_job.sh cancel ID...       kill the jobs' process groups
#
# ISOLATED_JOB_STATE is a directory outside every hidden one, where each job keeps its copy of
# the job script (the original lies in the hidden working directory), its log (ID.log), the
# process id of its process group (ID.pid) and, once it has ended, its exit status (ID.rc).
set -euo pipefail

die() {
    echo "isolated_job.sh: $*" >&2
    exit 2
}

state="${ISOLATED_JOB_STATE:?isolated_job.sh: set ISOLATED_JOB_STATE to a directory for job state}"
[[ -d "$state" ]] || die "ISOLATED_JOB_STATE=$state is not a directory"

hidden_dirs() {
    local dirs
    IFS=: read -r -a dirs <<<"${ISOLATED_JOB_HIDE:?isolated_job.sh: set ISOLATED_JOB_HIDE}"
    printf '%s\n' "${dirs[@]}"
}

submit() {
    local jobscript="$1" id
    [[ -f "$jobscript" ]] || die "no job script at $jobscript"
    while IFS= read -r dir; do
        [[ "$dir" = /* && -d "$dir" ]] || die "ISOLATED_JOB_HIDE: $dir is not an absolute directory"
    done < <(hidden_dirs)
    id="$(date +%s%N)-$$"
    cp "$jobscript" "$state/$id.sh"
    # A session of its own (its process group is what cancel kills); no file descriptor of the
    # caller stays open, so the plugin reads the id without waiting for the job.
    setsid "$0" run "$id" </dev/null >"$state/$id.log" 2>&1 &
    echo "$!" >"$state/$id.pid"
    echo "$id"
}

run() {
    local id="$1" rc=0
    unshare --mount --propagation private "$0" inside "$id" || rc=$?
    echo "$rc" >"$state/$id.rc.partial"
    mv "$state/$id.rc.partial" "$state/$id.rc"
}

inside() {
    local id="$1"
    while IFS= read -r dir; do
        mount -t tmpfs -o mode=0755 isolated-job "$dir"
        # Fail closed: a job must never run with a directory it should not see still visible.
        [[ -z "$(ls -A "$dir")" ]] || die "$dir is still visible after mounting a tmpfs over it"
    done < <(hidden_dirs)
    echo "isolated_job.sh: job $id runs with these directories hidden: $(hidden_dirs | paste -sd ' ')"
    # The job script starts with `cd <working directory>`: the empty tmpfs, its scratch.
    sh "$state/$id.sh"
}

status() {
    local id="$1"
    if [[ -f "$state/$id.rc" ]]; then
        if [[ "$(cat "$state/$id.rc")" == 0 ]]; then echo success; else echo failed; fi
    elif [[ -f "$state/$id.pid" ]] && kill -0 "$(cat "$state/$id.pid")" 2>/dev/null; then
        echo running
    else
        # Gone without an exit status (killed): Snakemake reruns or fails it.
        echo failed
    fi
}

cancel() {
    local id
    for id in "$@"; do
        [[ -f "$state/$id.pid" ]] && kill -- "-$(cat "$state/$id.pid")" 2>/dev/null || true
    done
}

command="${1:-}"
shift || true
case "$command" in
submit) [[ $# -eq 1 ]] || die "usage: submit JOBSCRIPT"; submit "$1" ;;
run) run "$1" ;;
inside) inside "$1" ;;
status) [[ $# -eq 1 ]] || die "usage: status ID"; status "$1" ;;
cancel) cancel "$@" ;;
*) die "usage: isolated_job.sh submit JOBSCRIPT | status ID | cancel ID..." ;;
esac
