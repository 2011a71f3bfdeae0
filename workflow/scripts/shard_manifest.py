import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.shards import shard_manifest

shard_manifest(
    snakemake.input.manifest,
    snakemake.params.shard,
    dict(snakemake.output.items()),
    reference_manifest_path=next(iter(snakemake.input.reference), None),
    reference_types=snakemake.params.reference_types,
)
