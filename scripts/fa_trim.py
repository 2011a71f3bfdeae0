import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.common.staging import stage_job

# Staged dataset files are opened at their copies, and only those (pathbench_flow.common.staging).
stage_job(snakemake)

from pathbench_flow.stages.trim import fa_trim

fa_trim(
    snakemake.input.manifest,
    snakemake.params.shard,
    snakemake.output[0],
    snakemake.params.settings,
)
