import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.manifest import validate_dataset

validate_dataset(
    snakemake.params.directory,
    snakemake.output.manifest,
    snakemake.output.report,
    n_shards=snakemake.params.n_shards,
    **snakemake.params.settings,
)
