# The image the rules run in under `--sdm apptainer` (README, "Containers"): Python 3.11 with
# the package and its dependencies, for clusters without that stack. From the repository root:
#   docker build -t pathbench-flow:0.3.0 .
#   apptainer build pathbench-flow-0.3.0.sif docker-daemon://pathbench-flow:0.3.0
# `--build-arg EXTRAS=neural` adds PathBench's model-based measures (torch from PyPI: a
# multi-GB CUDA build, which a GPU cluster wants); models are never downloaded at run time.
# Phonemes need no system package: the extra brings phonemizer-fork and espeakng-loader, whose
# bundled libespeak-ng 1.52.0 is closer to PathBench's pinned build than Debian's 1.51.
FROM python:3.11-slim

ARG EXTRAS=""
# A regular install (not editable): jobs import the package from site-packages, never from the
# build context, which is dropped afterwards. pyctcdecode declares numpy<2 but runs on numpy 2,
# hence --no-deps (README, "Model-based measures").
COPY . /tmp/pathbench-flow
RUN pip install --no-cache-dir "/tmp/pathbench-flow${EXTRAS:+[$EXTRAS]}" \
    && case ",$EXTRAS," in *,neural,*) pip install --no-cache-dir --no-deps "pyctcdecode==0.5.0";; esac \
    && rm -rf /tmp/pathbench-flow

# An Apptainer image is read-only: numba's compiled-function cache and matplotlib's font cache
# go to /tmp (bound from the host) instead of site-packages and $HOME.
ENV NUMBA_CACHE_DIR=/tmp/pathbench-numba-cache \
    MPLCONFIGDIR=/tmp/pathbench-matplotlib
