"""The host's numeric-kernel variables reach a job in a container as they reach a host job."""

from __future__ import annotations

from pathbench_flow.runtime.kernel_environment import container_kernel_environment


def test_kernel_variables_get_container_copies_and_a_users_own_copy_is_kept():
    environment = {
        "OPENBLAS_CORETYPE": "Haswell",
        "OPENBLAS_L2_SIZE": "1048576",
        "SINGULARITYENV_OPENBLAS_L2_SIZE": "524288",
        "OMP_NUM_THREADS": "8",
    }
    assert container_kernel_environment(environment) == {
        "APPTAINERENV_OPENBLAS_CORETYPE": "Haswell",
        "SINGULARITYENV_OPENBLAS_CORETYPE": "Haswell",
        "APPTAINERENV_OPENBLAS_L2_SIZE": "1048576",
        "SINGULARITYENV_OPENBLAS_L2_SIZE": "524288",
    }
    assert container_kernel_environment({"OMP_NUM_THREADS": "8"}) == {}
