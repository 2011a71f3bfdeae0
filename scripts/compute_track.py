import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.tracks import compute_track

compute_track(
    snakemake.input.manifest,
    int(snakemake.wildcards.shard),
    snakemake.wildcards.track,
    snakemake.wildcards.variant,
    snakemake.output[0],
    trim_paths=list(snakemake.input.trims),
)
