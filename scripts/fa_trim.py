import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.trimming import trim_shard

trim_shard(
    snakemake.input.manifest,
    snakemake.params.shard,
    snakemake.output[0],
    snakemake.params.settings,
)
