import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.analysis import plot_dataset

plot_dataset(
    snakemake.wildcards.dataset,
    snakemake.input.speakers,
    snakemake.input.correlations,
    snakemake.input.signs,
    snakemake.input.aggregation,
    snakemake.output.scatters,
    snakemake.output.bars,
    allowlist=snakemake.params.allowlist,
)
