import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.predictors import import_predictor

import_predictor(
    snakemake.wildcards.predictor,
    snakemake.params.kind,
    snakemake.input.csv,
    snakemake.params.dataset_dir,
    snakemake.input.manifest,
    snakemake.output[0],
)
