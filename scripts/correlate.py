import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.analysis import correlate

correlate(
    snakemake.input[0],
    snakemake.output[0],
    **snakemake.params.settings,
    predictors=snakemake.params.predictors,
)
