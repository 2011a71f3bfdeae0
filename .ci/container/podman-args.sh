# Sourced by the container harness (build-image.sh, apptainer): the podman options this kind of
# machine needs, none of which belongs in the Dockerfile users build.
# - runc: crun refuses a hybrid cgroup v1/v2 setup ("cgroups in hybrid mode not supported"),
#   runc runs there (PATHBENCH_OCI_RUNTIME chooses another).
# - nofile and nproc, explicit: podman asks for its defaults (nofile 1048576, nproc above
#   32768), which a sandboxed host refuses ("error setting rlimit ... operation not permitted");
#   16384 of each is below what such hosts allow and far above what a job opens or starts.
# shellcheck shell=bash disable=SC2034
PODMAN_GLOBAL_ARGS=(--runtime "${PATHBENCH_OCI_RUNTIME:-runc}")
PODMAN_RUN_ARGS=(
    --ulimit "nofile=${PATHBENCH_NOFILE:-16384}:${PATHBENCH_NOFILE:-16384}"
    --ulimit "nproc=${PATHBENCH_NPROC:-16384}:${PATHBENCH_NPROC:-16384}"
)
