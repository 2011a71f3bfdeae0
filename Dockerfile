# The image the rules run in under `--sdm apptainer` (docs/clusters.md, "Deployment and
# containers"):
# Python 3.11 with the package and its dependencies, for clusters without that stack. From the
# repository root (podman takes the same arguments):
#   docker build -t pathbench-flow:0.3.0 .
#   apptainer build pathbench-flow-0.3.0.sif docker-daemon://pathbench-flow:0.3.0
# No system package is added: phonemes (the `neural` extra) come from phonemizer-fork and
# espeakng-loader, whose bundled libespeak-ng 1.52.0 is closer to PathBench's pinned build than
# Debian's 1.51; the workflow calls no espeak-ng program.
#
# BASE: any Debian-like image whose `pip` installs into the Python first on PATH; the default is
# the only registry image the build needs (the tests build on a debootstrapped bookworm instead).
ARG BASE=python:3.11-slim
FROM ${BASE}

# EXTRAS=neural adds PathBench's model-based measures; models are never downloaded at run time.
# torch from PyPI is the CUDA build (gigabytes), which a GPU cluster wants. A CPU cluster sets
# TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu: torch is then installed first, pinned
# to the release CI tests (its CPU build), and the extra finds it satisfied.
ARG EXTRAS=""
ARG TORCH_INDEX_URL=""
# A regular install (not editable): jobs import the package from site-packages, never from the
# build context, which is dropped afterwards. pyctcdecode declares numpy<2 but runs on numpy 2,
# hence --no-deps (docs/measures.md, "Model-based measures").
COPY . /tmp/pathbench-flow
RUN if [ -n "$TORCH_INDEX_URL" ]; then \
        pip install --no-cache-dir --index-url "$TORCH_INDEX_URL" "torch==2.13.0"; \
    fi \
    && pip install --no-cache-dir "/tmp/pathbench-flow${EXTRAS:+[$EXTRAS]}" \
    && case ",$EXTRAS," in *,neural,*) pip install --no-cache-dir --no-deps "pyctcdecode==0.5.0";; esac \
    && rm -rf /tmp/pathbench-flow

# The image is read-only under Apptainer (and under `podman run --read-only`): numba's
# compiled-function cache and matplotlib's font cache go to /tmp instead of site-packages and
# $HOME; anything else that caches (Snakemake, Hugging Face) writes under $HOME, which Apptainer
# binds to the working directory (`--home`; with podman, bind a writable directory and set HOME).
#
# Every rule runs on one thread (workflow/rules/settings.smk), and Snakemake passes that count
# to its jobs in these variables; a runner that does not pass the environment through
# (`apptainer --cleanenv`, docker-style runners) would leave the libraries to take every core,
# and sums reduced in another order differ in the last digit. Set here, the results are the
# host's byte for byte whatever the runner.
ENV NUMBA_CACHE_DIR=/tmp/pathbench-numba-cache \
    MPLCONFIGDIR=/tmp/pathbench-matplotlib \
    OMP_NUM_THREADS=1 \
    GOTO_NUM_THREADS=1 \
    OPENBLAS_NUM_THREADS=1 \
    MKL_NUM_THREADS=1 \
    VECLIB_MAXIMUM_THREADS=1 \
    NUMEXPR_NUM_THREADS=1 \
    NUMBA_NUM_THREADS=1
