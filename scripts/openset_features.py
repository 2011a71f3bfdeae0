import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.openset.features import extract_features

extract_features(
    snakemake.input.manifest,
    int(snakemake.wildcards.shard),
    snakemake.output[0],
    trim_paths=list(snakemake.input.trims),
)
