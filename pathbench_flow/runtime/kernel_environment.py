"""The environment variables that choose numeric kernels, carried into containers.

OpenBLAS picks its kernels for the processor it finds, unless ``OPENBLAS_CORETYPE`` names
one (some machines set it, with ``OPENBLAS_L2_SIZE``, because older OpenBLAS builds compute
wrong results or crash on their processors). Two kernels can round differently in the last
bit, so a job in a container that does not see these variables computes other bytes than the
same job on the host: ``apptainer exec --cleanenv`` drops the caller's environment. Apptainer
(and Singularity) pass ``APPTAINERENV_<NAME>`` (``SINGULARITYENV_<NAME>``) into the container
as ``<NAME>`` even with ``--cleanenv``, so the workflow sets those for every kernel variable
the host has: jobs in the image then run the host's kernels, and give the host's bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

KERNEL_VARIABLES = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "NPY_DISABLE_CPU_FEATURES",
)
"""Variables that select the code paths of OpenBLAS, MKL and numpy's own SIMD kernels."""
CONTAINER_PREFIXES = ("APPTAINERENV_", "SINGULARITYENV_")
"""What Apptainer and Singularity strip from a variable's name to set it in the container."""


def container_kernel_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """The container-prefixed copies of the kernel variables set in ``environment`` (one
    already given by the user for a container is kept as given)."""
    return {
        prefix + name: environment.get(prefix + name, environment[name])
        for name in KERNEL_VARIABLES
        if name in environment
        for prefix in CONTAINER_PREFIXES
    }
