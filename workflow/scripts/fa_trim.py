import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.trim import fa_trim

fa_trim(
    snakemake.input.manifest,
    snakemake.params.shard,
    snakemake.output[0],
    snakemake.params.settings,
)
