import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.staging import stage

# Dataset files are opened at their staged copies, and only those (pathbench_flow.staging).
stage(snakemake.input)

from pathbench_flow.stages.trim import fa_trim

fa_trim(
    snakemake.input.manifest,
    snakemake.params.shard,
    snakemake.output[0],
    snakemake.params.settings,
)
