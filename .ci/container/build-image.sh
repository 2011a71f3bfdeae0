#!/usr/bin/env bash
# Builds the workflow's image with podman for tests/test_container.py, on a machine that reaches
# no container registry: the base is Debian bookworm from Debian's archive (debootstrap), shaped
# like python:3.11-slim (python and pip first on PATH), and the repository's Dockerfile is built
# on it with `--build-arg BASE=`. Prints the image's name on its last line.
#
# Everything this machine needs lives here, not in the Dockerfile users build:
# - the debootstrap base is cached per day under $PATHBENCH_CONTAINER_CACHE (default
#   ${TMPDIR:-/tmp}/pathbench-container-<date>), as building it takes minutes;
# - pip in the build reads a site pip.conf mounted for the build only (never in a layer): the
#   CA bundle of this machine (the package index may be reached through a TLS-inspecting proxy)
#   and, as constraints, the versions of the Python that runs the tests, so that the comparison
#   with a host run measures the container, not a newer release;
# - the OCI runtime and limits come from podman-args.sh (runc where crun refuses a hybrid cgroup
#   setup; explicit nofile and nproc limits).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=.ci/container/podman-args.sh
. "$here/podman-args.sh"

mirror="${PATHBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cache="${PATHBENCH_CONTAINER_CACHE:-${TMPDIR:-/tmp}/pathbench-container-$(date +%Y%m%d)}"
base_image="localhost/pathbench-base:bookworm-$(date +%Y%m%d)"
image="${PATHBENCH_IMAGE:-localhost/pathbench-flow:test}"
ca_bundle="${PATHBENCH_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
mkdir -p "$cache"

if [ ! -s "$cache/bookworm.tar" ]; then
    root="$cache/rootfs"
    rm -rf "$root"
    # python3-venv brings pip (ensurepip); the venv at /opt/python is what python:3.11-slim's
    # /usr/local is: a pip-writable Python first on PATH (Debian's own refuses pip, PEP 668).
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
        || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    chroot "$root" python3 -m venv /opt/python
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$cache/bookworm.tar.part" .
    mv "$cache/bookworm.tar.part" "$cache/bookworm.tar"
    rm -rf "$root"
fi
if ! podman image exists "$base_image"; then
    podman import \
        --change "ENV PATH=/opt/python/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        --change "ENV LANG=C.UTF-8" \
        --change 'CMD ["python3"]' \
        "$cache/bookworm.tar" "$base_image" >/dev/null
fi

# The build's pip.conf: this machine's CA bundle and the tests' versions as constraints (the
# package itself and editable installs left out: the build installs the repository's copy).
build_dir="$(mktemp -d)"
trap 'rm -rf "$build_dir"' EXIT
"${PYTHON:-python3}" -m pip freeze --exclude-editable | grep -E '^[A-Za-z0-9._-]+==' \
    | grep -v -i -E '^pathbench[-_]flow==' >"$build_dir/constraints.txt"
cp "$ca_bundle" "$build_dir/ca-bundle.crt"
printf '[global]\ncert = /run/pathbench-build/ca-bundle.crt\nconstraint = /run/pathbench-build/constraints.txt\n' \
    >"$build_dir/pip.conf"

# The build reaches the package index on the host's network as it is (no bridge network to set
# up on a CI runner); the image's layers are reused while the build context is unchanged.
start=$(date +%s)
podman "${PODMAN_GLOBAL_ARGS[@]}" build \
    "${PODMAN_RUN_ARGS[@]}" \
    --network host \
    --volume "$build_dir:/run/pathbench-build:ro" \
    --env PIP_CONFIG_FILE=/run/pathbench-build/pip.conf \
    --build-arg "BASE=$base_image" \
    --tag "$image" "$repo" >&2
echo "built $image in $(( $(date +%s) - start )) s" >&2
echo "$image"
