import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.shards import shard_manifest

shard_manifest(
    snakemake.params.datasets,
    snakemake.input.manifests,
    snakemake.input.references,
    {name: list(paths) for name, paths in snakemake.output.items()},
    reference_types=snakemake.params.reference_types,
    shared_speaker_ids=snakemake.params.shared_speaker_ids,
)
